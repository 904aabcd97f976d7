-- hilbridge oracle trace script for MAME 0.251 (odyssey2 / videopac), started with
--   mame <system> ... -autoboot_script trace.lua -autoboot_delay 0
-- hilbridge.oracle.mame builds that command line; the record format is parsed by
-- hilbridge.oracle.trace, which documents every field.
--
-- Environment:
--   HILBRIDGE_INPUTS_LUA  the path of inputs.lua (the input movie code both hilbridge scripts load)
--   TRACE_OUT        trace file to write
--   TRACE_FRAMES     frames to run, then exit
--   TRACE_CYCLES_PER_SECOND  8048 machine cycles per second as MAME runs them (0.251 Lua cannot
--                    ask the device): MAME rounds clock / 15 UP, so NTSC runs 357 955 cycles/s
--   TRACE_READS      "1": also record MOVX reads (read taps are slow)
--   TRACE_STATE      "1": one state line per frame (VDC registers, external and internal RAM)
--   TRACE_PIXELS     file for raw screen:pixels() frames; a frame equal to the one before it
--                    is not written again, the P line names the stored frame it equals
--   TRACE_INPUTS     the input movie (hilbridge.machine.inputs) as "frame:+|-:port:mask" items
--                    joined by ";", applied before that frame runs (frame 0 at the start; mask in
--                    hex; every field of the port with a bit in the mask is pressed or released)
--
-- Lines: "W|R cycle p1 addr data frame vpos hpos", "F frame cycle pc",
--        "S frame vdc xram iram p1 p2", "P frame index" (at frame end k, screen:pixels() holds
--        the picture of frame k - 1; hilbridge.oracle.mame shifts it back).

local out_name    = assert(os.getenv("TRACE_OUT"), "TRACE_OUT is not set")
local max_frames  = tonumber(os.getenv("TRACE_FRAMES") or "300")
local cycles_per_second = assert(tonumber(os.getenv("TRACE_CYCLES_PER_SECOND") or ""),
                                 "TRACE_CYCLES_PER_SECOND is not set")
local log_reads   = os.getenv("TRACE_READS") == "1"
local log_state   = os.getenv("TRACE_STATE") == "1"
local pixels_name = os.getenv("TRACE_PIXELS") or ""

local machine = manager.machine
local cpu     = machine.devices[":maincpu"]
local io_space = cpu.spaces["io"]
local internal_ram = cpu.spaces["data"]
local vdc     = machine.devices[":i8244"]
local screen  = machine.screens[":screen"]
local out     = assert(io.open(out_name, "w"))
local pixels_out = nil
if pixels_name ~= "" then pixels_out = assert(io.open(pixels_name, "wb")) end

-- Save-state items read device internals without the side effects of a bus read
-- (reading A1 or A2 through the io space would clear status bits).
local function item(device, name)
  local index = device.items[name]
  return index and emu.item(index) or nil
end
local vdc_registers = item(vdc, "0/m_vdc.reg")
local external_ram = item(machine.devices[":"], "0/m_ram")

local frame_period = screen.frame_period
local scan_period = screen.scan_period
local pixel_period = screen.pixel_period

out:write(string.format("# mame=%s system=%s cycles_per_second=%d frame_period=%.12f scan_period=%.12f\n",
          emu.app_version(), emu.romname(), cycles_per_second, frame_period, scan_period))

-- 0.251 has no screen:vpos()/hpos(): derive the beam from the time to the next (0, 0).
local function beam()
  local position = frame_period - screen:time_until_pos(0, 0)
  if position >= frame_period - 1e-12 then position = 0 end
  local line = math.floor(position / scan_period + 1e-9)
  local pixel = math.floor((position - line * scan_period) / pixel_period + 1e-9)
  return line, pixel
end

-- Machine cycles since power-on. MAME stamps an access after its instruction's cycles; the
-- CPU's time is a whole number of cycles, so the product is an integer up to rounding noise.
local function cycle()
  return math.floor(machine.time:as_double() * cycles_per_second + 0.5)
end

local frames = 0

local function record(kind, offset, data)
  local line, pixel = beam()
  out:write(string.format("%s %d %02X %02X %02X %d %d %d\n", kind, cycle(),
            cpu.state["P1"].value, offset, data, frames, line, pixel))
end

-- Tap handles must live in globals: a local one is garbage-collected when this chunk
-- returns, and the tap then stops silently (or MAME crashes).
hilbridge_write_tap = io_space:install_write_tap(0x00, 0xff, "hilbridge_writes",
  function(offset, data, mask) record("W", offset, data) end)
if log_reads then
  hilbridge_read_tap = io_space:install_read_tap(0x00, 0xff, "hilbridge_reads",
    function(offset, data, mask) record("R", offset, data) end)
end

local function hex_item(it, count)
  local parts = {}
  for i = 0, count - 1 do parts[#parts + 1] = string.format("%02X", it:read(i)) end
  return table.concat(parts)
end

-- the input movie (inputs.lua, shared with the other hilbridge script)
local inputs_lua = assert(os.getenv("HILBRIDGE_INPUTS_LUA"), "HILBRIDGE_INPUTS_LUA is not set")
local apply_inputs = assert(loadfile(inputs_lua))(machine, os.getenv("TRACE_INPUTS") or "")

apply_inputs(0)
local previous_pixels = nil
local stored_frames = 0

emu.register_frame_done(function()
  local frame = frames
  frames = frames + 1
  out:write(string.format("F %d %d %03X\n", frame, cycle(), cpu.state["PC"].value))
  apply_inputs(frame + 1)
  if log_state then
    local iram = {}
    for i = 0, 63 do iram[#iram + 1] = string.format("%02X", internal_ram:read_u8(i)) end
    out:write(string.format("S %d %s %s %s %02X %02X\n", frame, hex_item(vdc_registers, 256),
              hex_item(external_ram, 128), table.concat(iram),
              cpu.state["P1"].value, cpu.state["P2"].value))
  end
  if pixels_out then
    local pixels = screen:pixels()
    if pixels ~= previous_pixels then
      pixels_out:write(pixels)
      stored_frames = stored_frames + 1
      previous_pixels = pixels
    end
    out:write(string.format("P %d %d\n", frame, stored_frames - 1))
  end
  if frames >= max_frames then
    out:write(string.format("# done frames=%d\n", frames))
    out:close()
    if pixels_out then pixels_out:close() end
    hilbridge_write_tap:remove()
    if hilbridge_read_tap then hilbridge_read_tap:remove() end
    -- Debian's 0.251 (system liblua5.3) often segfaults in its normal teardown when a
    -- script is loaded; leaving through os.exit skips that teardown.
    io.stdout:flush()
    os.exit(0)
  end
end)
