-- hilbridge capture script for MAME 0.251 (odyssey2 / videopac): MAME as the console of a bus
-- capture. Started by hilbridge.capture.mame with -autoboot_script capture.lua -autoboot_delay 0;
-- hilbridge.capture.mame parses the lines and turns them into capture items (docs/capture.md).
--
-- Environment:
--   HILBRIDGE_INPUTS_LUA  the path of inputs.lua (the input movie code both hilbridge scripts load)
--   CAPTURE_OUT        file to write (hilbridge reads it while MAME runs)
--   CAPTURE_FRAMES     MAME frames to run, then exit
--   CAPTURE_CYCLES_PER_SECOND  the CPU's cycle rate as MAME runs it: ceil(clock / 15), 357955 NTSC
--   CAPTURE_READS      "1": tap MOVX reads too (read taps are slow)
--   CAPTURE_INPUTS     the input movie as "frame:+|-:port:mask" items joined by ";", applied
--                      before that frame runs (frame 0 at the start)
--
-- Lines: "F cycle addr data p1" a fetch from 0400h-0FFFh, "W|R cycle addr data p1" a MOVX write
-- or read, "E frame cycle" MAME's frame end, "# done" after the last frame. Cycles are exact
-- machine cycles since power-on, from the integer parts of MAME's time (see cycle() below);
-- a fetch is stamped when MAME makes it (an opcode at the start of its instruction, an operand after
-- the instruction's cycles), hilbridge regroups them per instruction.

local out_name = assert(os.getenv("CAPTURE_OUT"), "CAPTURE_OUT is not set")
local max_frames = assert(tonumber(os.getenv("CAPTURE_FRAMES") or ""), "CAPTURE_FRAMES is not set")
local rate = assert(math.tointeger(tonumber(os.getenv("CAPTURE_CYCLES_PER_SECOND") or "")),
                    "CAPTURE_CYCLES_PER_SECOND is not set")
local log_reads = os.getenv("CAPTURE_READS") == "1"

local machine = manager.machine
local cpu = machine.devices[":maincpu"]
local p1_state = cpu.state["P1"]
local out = assert(io.open(out_name, "w"))
out:setvbuf("full", 1 << 16)

-- Machine cycles from the integer seconds and attoseconds of MAME's time, rounded to the nearest
-- cycle: MAME advances its CPU's time by whole cycles of 10^18 // rate attoseconds, so this is
-- exact (no floating point, no drift: a clock / 15 rate would fall one cycle behind every ~671 000
-- cycles). attoseconds * rate would overflow 64 bits, so it is split into 10^9 halves.
local function cycle()
  local now = machine.time
  local high, low = now.attoseconds // 1000000000, now.attoseconds % 1000000000
  local nanocycles = high * rate + (low * rate) // 1000000000
  return now.seconds * rate + (nanocycles + 500000000) // 1000000000
end

out:write(string.format("# mame=%s system=%s rate=%d\n", emu.app_version(), emu.romname(), rate))

-- Tap handles must live in globals: a local one is garbage-collected and the tap stops.
hilbridge_fetch_tap = cpu.spaces["program"]:install_read_tap(0x400, 0xfff, "hilbridge_fetches",
  function(offset, data, mask)
    out:write(string.format("F %d %X %X %X\n", cycle(), offset, data, p1_state.value))
  end)
local io_space = cpu.spaces["io"]
hilbridge_write_tap = io_space:install_write_tap(0x00, 0xff, "hilbridge_writes",
  function(offset, data, mask)
    out:write(string.format("W %d %X %X %X\n", cycle(), offset, data, p1_state.value))
  end)
if log_reads then
  hilbridge_read_tap = io_space:install_read_tap(0x00, 0xff, "hilbridge_reads",
    function(offset, data, mask)
      out:write(string.format("R %d %X %X %X\n", cycle(), offset, data, p1_state.value))
    end)
end

-- the input movie (inputs.lua, shared with the other hilbridge script)
local inputs_lua = assert(os.getenv("HILBRIDGE_INPUTS_LUA"), "HILBRIDGE_INPUTS_LUA is not set")
local apply_inputs = assert(loadfile(inputs_lua))(machine, os.getenv("CAPTURE_INPUTS") or "")

apply_inputs(0)
local frames = 0
emu.register_frame_done(function()
  out:write(string.format("E %d %d\n", frames, cycle()))
  frames = frames + 1
  apply_inputs(frames)
  out:flush()
  if frames >= max_frames then
    out:write("# done\n")
    out:close()
    hilbridge_fetch_tap:remove()
    hilbridge_write_tap:remove()
    if hilbridge_read_tap then hilbridge_read_tap:remove() end
    -- Debian's 0.251 often segfaults in its normal teardown when a script is loaded (docs/oracle.md)
    io.stdout:flush()
    os.exit(0)
  end
end)
