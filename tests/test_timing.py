from hilbridge.machine.timing import NTSC, PAL


def test_frame_boundaries_match_mame_traces():
    # mame-oracle.md §7: frame_done at cycles 5983, 11966, 17950 (NTSC); 7929, 15859, 23788 (PAL)
    assert [NTSC.frame_end_cycle(n) for n in range(3)] == [5983, 11966, 17950]
    assert [PAL.frame_end_cycle(n) for n in range(3)] == [7929, 15859, 23788]


def test_pixels_per_cycle_close_to_nominal():
    assert abs(float(NTSC.pixels_per_cycle) - 20) < 1e-5
    assert abs(float(PAL.pixels_per_cycle) - 18) < 1e-5
