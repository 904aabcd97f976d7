-- The input movie for hilbridge's MAME scripts (trace.lua, capture.lua), which both load it with
--   local apply_inputs = loadfile(os.getenv("HILBRIDGE_INPUTS_LUA"))(machine, movie_text)
-- (hilbridge.oracle.mame.inputs_lua gives the path). The movie (hilbridge.machine.inputs) comes as
-- "frame:+|-:port:mask" items joined by ";", applied before that frame runs (frame 0 at the start;
-- mask in hex; every field of the port with a bit in the mask is pressed or released).
-- Returns apply_inputs(frame), which applies the changes before `frame`.

local machine, text = ...

local input_changes = {}
for frame, sign, port, mask in string.gmatch(text or "", "(%d+):([+-]):([^:;]+):(%x+)") do
  local at = tonumber(frame)
  input_changes[at] = input_changes[at] or {}
  table.insert(input_changes[at], { pressed = sign == "+", port = port, mask = tonumber(mask, 16) })
end

return function(frame)
  for _, change in ipairs(input_changes[frame] or {}) do
    local port = assert(machine.ioport.ports[":" .. change.port], "no input port " .. change.port)
    for name, field in pairs(port.fields) do
      -- "Keyboard" is a configuration field that shares a mask with a key
      if name ~= "Keyboard" and (field.mask & change.mask) ~= 0 then
        field:set_value(change.pressed and 1 or 0)
      end
    end
  end
end
