package dev.claudesidecar.core.transcript

import com.google.gson.JsonArray
import com.google.gson.JsonElement
import com.google.gson.JsonObject

// Lenient readers of the CLI's own JSON (claude/message carries it as is): a missing or
// differently typed field reads as empty, because a newer CLI may change what it sends.

internal fun JsonElement?.asObj(): JsonObject = if (this != null && isJsonObject) asJsonObject else JsonObject()

internal fun JsonObject.obj(name: String): JsonObject = get(name).asObj()

internal fun JsonObject.str(name: String): String = get(name)?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isString }?.asString ?: ""

internal fun JsonObject.int(name: String): Int? = get(name)?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isNumber }?.asInt

internal fun JsonObject.isTrue(name: String): Boolean =
    get(name)?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isBoolean }?.asBoolean == true

internal fun JsonObject.objects(name: String): List<JsonObject> = (get(name) as? JsonArray)?.map { it.asObj() } ?: emptyList()
