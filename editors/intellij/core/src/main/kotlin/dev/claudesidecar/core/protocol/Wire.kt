package dev.claudesidecar.core.protocol

import com.google.gson.Gson
import com.google.gson.GsonBuilder
import com.google.gson.JsonElement
import com.google.gson.JsonNull
import com.google.gson.TypeAdapter
import com.google.gson.TypeAdapterFactory
import com.google.gson.internal.bind.JsonTreeWriter
import com.google.gson.reflect.TypeToken
import com.google.gson.stream.JsonReader
import com.google.gson.stream.JsonToken
import com.google.gson.stream.JsonWriter
import org.eclipse.lsp4j.jsonrpc.json.MessageJsonHandler

// The hand-written half of the protocol package: what the generated Protocol.kt refers to,
// and the Gson settings that put its types on the wire exactly as the schema says.

/** A string enum of the protocol; [wire] is its JSON value (`"acceptEdits"`, not `ACCEPT_EDITS`). */
interface WireEnum {
    val wire: String
}

/**
 * This value as it may be at run time: a wire value this client does not know (a newer daemon's)
 * is read as null, whatever the field's Kotlin type says. For a `when` with a `null` branch, which
 * the compiler would otherwise call dead code (and without which an unknown value would throw).
 */
fun <E : WireEnum> E?.orUnknown(): E? = this

/**
 * This entry as it may be at run time: an entry of a `kind` this client does not know (a newer
 * daemon's) is read as null, like an unknown enum value, whatever the field's Kotlin type says.
 */
fun Entry?.orUnknown(): Entry? = this

/**
 * A required field that may be null (e.g. `toolUseId` of a permission request): written as
 * `null`, never left out. Every other null field is left out, as the daemon does.
 */
@Target(AnnotationTarget.FIELD)
@Retention(AnnotationRetention.RUNTIME)
annotation class AlwaysWritten

/** A JSON-RPC request: its name and the classes of its params and result. */
class Method<P : Any, R : Any>(
    val name: String,
    val paramsType: Class<P>,
    val resultType: Class<R>,
) {
    override fun toString(): String = name
}

/** A notification: its name and the class of its params. */
class NotificationType<P : Any>(
    val name: String,
    val paramsType: Class<P>,
) {
    override fun toString(): String = name
}

/** The Gson settings of the protocol types; lsp4j's [MessageJsonHandler] is configured with them. */
object ProtocolJson {
    /**
     * Registers the protocol's adapters. They are registered after lsp4j's own, so they win
     * (lsp4j would write enums as their ordinal numbers).
     */
    fun configure(builder: GsonBuilder): GsonBuilder = builder
        .registerTypeAdapterFactory(WireEnumAdapterFactory)
        .registerTypeAdapterFactory(UnionAdapterFactory)
        .registerTypeAdapterFactory(AlwaysWrittenAdapterFactory)

    /** A Gson that reads and writes protocol types as the connection does (e.g. for tests or storage). */
    val gson: Gson by lazy { MessageJsonHandler(emptyMap()) { configure(it) }.gson }
}

private object WireEnumAdapterFactory : TypeAdapterFactory {
    override fun <T> create(gson: Gson, type: TypeToken<T>): TypeAdapter<T>? {
        val raw = type.rawType
        if (!raw.isEnum || !WireEnum::class.java.isAssignableFrom(raw)) return null
        val byWire = raw.enumConstants.associateBy { (it as WireEnum).wire }
        return object : TypeAdapter<T>() {
            override fun write(out: JsonWriter, value: T?) {
                if (value == null) out.nullValue() else out.value((value as WireEnum).wire)
            }

            @Suppress("UNCHECKED_CAST")
            override fun read(reader: JsonReader): T? {
                if (reader.peek() == JsonToken.NULL) {
                    reader.nextNull()
                    return null
                }
                // A value this client does not know (a newer daemon) reads as null.
                return byWire[reader.nextString()] as T?
            }
        }
    }
}

private object UnionAdapterFactory : TypeAdapterFactory {
    override fun <T> create(gson: Gson, type: TypeToken<T>): TypeAdapter<T>? {
        val members = UNION_MEMBERS[type.rawType] ?: return null
        val tagField = UNION_TAGS[type.rawType] ?: "type"
        val elements = gson.getAdapter(JsonElement::class.java)
        return object : TypeAdapter<T>() {
            @Suppress("UNCHECKED_CAST")
            override fun write(out: JsonWriter, value: T?) {
                if (value == null) return run { out.nullValue() }
                (gson.getAdapter(value.javaClass) as TypeAdapter<T>).write(out, value)
            }

            @Suppress("UNCHECKED_CAST")
            override fun read(reader: JsonReader): T? {
                val tree = elements.read(reader)
                if (tree == null || tree.isJsonNull) return null
                val tag = tree.asJsonObject.get(tagField)?.asString
                // A member this client does not know (a newer daemon's) reads as null, like an
                // unknown enum value: the message around it still arrives.
                val member = members[tag] ?: return null
                return gson.fromJson(tree, member) as T
            }
        }
    }
}

private object AlwaysWrittenAdapterFactory : TypeAdapterFactory {
    override fun <T> create(gson: Gson, type: TypeToken<T>): TypeAdapter<T>? {
        val always = type.rawType.declaredFields.filter { it.isAnnotationPresent(AlwaysWritten::class.java) }.map { it.name }
        if (always.isEmpty()) return null
        val delegate = gson.getDelegateAdapter(this, type)
        val elements = gson.getAdapter(JsonElement::class.java)
        return object : TypeAdapter<T>() {
            override fun write(out: JsonWriter, value: T?) {
                if (value == null) return run { out.nullValue() }
                val tree = JsonTreeWriter().apply { serializeNulls = false }.also { delegate.write(it, value) }.get()
                val fields = tree.asJsonObject
                for (name in always) if (!fields.has(name)) fields.add(name, JsonNull.INSTANCE)
                val before = out.serializeNulls
                out.serializeNulls = true
                try {
                    elements.write(out, fields)
                } finally {
                    out.serializeNulls = before
                }
            }

            override fun read(reader: JsonReader): T? = delegate.read(reader)
        }
    }
}
