--- Images for the next message: :ClaudeImage [file], or a prompt that is only an image's path
--- (what a terminal pastes when a file is dropped on it). They go with the next prompt sent,
--- as claude/sendMessage `content` image blocks before its text.
local log = require("claude_sidecar.log")

local M = {}

--- The API takes images up to 5 MB each.
local MAX_BYTES = 5 * 1024 * 1024
local EXTENSIONS = { png = true, jpg = true, jpeg = true, gif = true, webp = true }

--- The media type of image bytes `data` by their signature; nil for anything else.
---@param data string
---@return string|nil
function M.media_type(data)
  if data:sub(1, 8) == "\137PNG\r\n\26\n" then
    return "image/png"
  elseif data:sub(1, 3) == "\255\216\255" then
    return "image/jpeg"
  elseif data:sub(1, 6) == "GIF87a" or data:sub(1, 6) == "GIF89a" then
    return "image/gif"
  elseif data:sub(1, 4) == "RIFF" and data:sub(9, 12) == "WEBP" then
    return "image/webp"
  end
  return nil
end

local function size(bytes)
  return bytes < 1024 * 1024 and string.format("%.0f KB", math.max(bytes / 1024, 1))
    or string.format("%.1f MB", bytes / 1024 / 1024)
end

--- Read `path` as an image: { path, media_type, data (base64), bytes }, or nil and why not.
---@param path string
---@return table|nil image, string|nil why_not
function M.load(path)
  local stat = vim.uv.fs_stat(path)
  if stat and stat.size > MAX_BYTES then
    -- Refused before reading: a big file need not pass through memory to be refused.
    return nil, string.format("%s is too large (%s; at most 5 MB)", vim.fn.fnamemodify(path, ":~:."), size(stat.size))
  end
  local file = io.open(path, "rb")
  if not file then
    return nil, "cannot read " .. path
  end
  local data = file:read("*a")
  file:close()
  local media_type = M.media_type(data)
  if not media_type then
    return nil, vim.fn.fnamemodify(path, ":~:.") .. " is not an image Claude can read (PNG, JPEG, GIF or WebP)"
  end
  return { path = path, media_type = media_type, data = vim.base64.encode(data), bytes = #data }
end

--- Attach the image at `path` to chat's next message; a line in the transcript says so.
--- Anything that is not a PNG, JPEG, GIF or WebP image is refused with a message.
---@param chat claude_sidecar.Chat
---@param path string
---@return boolean attached
function M.attach(chat, path)
  path = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  local image, why_not = M.load(path)
  if not image then
    log.notify(vim.log.levels.WARN, "%s", why_not)
    return false
  end
  chat.images = chat.images or {}
  table.insert(chat.images, image)
  local text = string.format("%s (%s) goes with your next message", vim.fn.fnamemodify(path, ":~:."), size(image.bytes))
  local transcript = require("claude_sidecar.transcript")
  require("claude_sidecar.chat").refresh(chat, transcript.add(chat.t, { kind = "image", text = text }))
  return true
end

--- The path a prompt consists of, if it is only one: as typed, quoted, with `\ ` escapes or as
--- a file:// URL (how terminals paste a dropped file).
local function lone_path(text)
  text = vim.trim(text)
  if text == "" or text:find("\n") then
    return nil
  end
  text = text:match("^'(.*)'$") or text:match('^"(.*)"$') or text:gsub("\\ ", " ")
  text = text:gsub("^file://", "")
  return text
end

--- A prompt that is only the path of an image file attaches it instead of being sent.
---@param chat claude_sidecar.Chat
---@param text string
---@return boolean taken
function M.take_prompt(chat, text)
  local path = lone_path(text)
  if not path then
    return false
  end
  local extension = (path:match("%.(%w+)$") or ""):lower()
  path = vim.fn.expand(path)
  if not EXTENSIONS[extension] or vim.fn.filereadable(path) == 0 then
    return false
  end
  M.attach(chat, path)
  return true
end

--- Put chat's attached images (then the text) into claude/sendMessage `params` as `content`;
--- the chat has none left afterwards.
---@param chat claude_sidecar.Chat
---@param params table with `text`
function M.into(chat, params)
  if not chat.images or #chat.images == 0 then
    return
  end
  local content = {}
  for _, image in ipairs(chat.images) do
    table.insert(content, { type = "image", mediaType = image.media_type, data = image.data })
  end
  table.insert(content, { type = "text", text = params.text })
  params.content, params.text = content, nil
  chat.images = {}
end

--- :ClaudeImage [path] — attach an image to the current chat's next message (asks for the
--- file without a path).
---@param chat claude_sidecar.Chat
---@param path string|nil
function M.command(chat, path)
  if path and path ~= "" then
    M.attach(chat, path)
    return
  end
  vim.ui.input({ prompt = "Image file: ", completion = "file" }, function(answer)
    if answer and answer ~= "" then
      M.attach(chat, answer)
    end
  end)
end

return M
