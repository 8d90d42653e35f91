// The IntelliJ Platform layer of claude-sidecar, built with Gradle and the IntelliJ Platform
// Gradle Plugin 2.x. Its core and ui come from editors/intellij's Maven build (mavenLocal()).
pluginManagement {
    val kotlinVersion: String by settings
    val intellijPlatformGradlePluginVersion: String by settings
    repositories {
        gradlePluginPortal()
        mavenCentral()
    }
    plugins {
        id("org.jetbrains.kotlin.jvm") version kotlinVersion
        id("org.jetbrains.intellij.platform") version intellijPlatformGradlePluginVersion
    }
}

rootProject.name = "claude-sidecar-intellij-plugin"
