import org.jetbrains.kotlin.gradle.dsl.KotlinVersion

plugins {
    id("org.jetbrains.kotlin.jvm")
    id("org.jetbrains.intellij.platform")
}

group = "dev.claudesidecar"
version = providers.gradleProperty("pluginVersion").get()

repositories {
    // claude-sidecar-core and -ui: `mvn -q install -DskipTests` in editors/intellij puts them here.
    mavenLocal()
    mavenCentral()
    intellijPlatform {
        defaultRepositories()
    }
}

val sidecarVersion = providers.gradleProperty("sidecarVersion").get()

dependencies {
    implementation("dev.claudesidecar:claude-sidecar-ui:$sidecarVersion") {
        // The IDE has its own Kotlin stdlib and kotlinx-coroutines: a plugin must not bundle them.
        exclude(group = "org.jetbrains.kotlin")
        exclude(group = "org.jetbrains.kotlinx")
        // FlatLaf is the standalone app's look and feel only; inside the IDE the IDE's applies.
        exclude(group = "com.formdev")
    }
    // Bundled with the plugin (through ui): claude-sidecar-core, org.eclipse.lsp4j.jsonrpc, Gson, commonmark.

    intellijPlatform {
        intellijIdeaCommunity(providers.gradleProperty("platformVersion"))
        pluginVerifier()
    }
}

kotlin {
    // IntelliJ Platform 2024.3+ runs on Java 21.
    jvmToolchain(21)
    compilerOptions {
        // Only what the Kotlin stdlib bundled with 2024.3 (2.0) has.
        apiVersion.set(KotlinVersion.KOTLIN_2_0)
        languageVersion.set(KotlinVersion.KOTLIN_2_0)
    }
}

intellijPlatform {
    // No settings to index for search: the page is small.
    buildSearchableOptions = false
    pluginConfiguration {
        version = providers.gradleProperty("pluginVersion")
        ideaVersion {
            sinceBuild = providers.gradleProperty("sinceBuild")
            // No upper bound: newer IDEs too (the plugin uses only public, stable APIs).
            untilBuild = provider { null }
        }
    }
    pluginVerification {
        ides {
            recommended()
        }
    }
}
