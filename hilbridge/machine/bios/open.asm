; hilbridge open BIOS: a 1 KB replacement for the Videopac / Odyssey² console BIOS.
; Written from the documented entry points and register contracts only (docs/bios.md lists every
; entry point, its contract and the source of each fact). Every routine sits at its documented
; address; where a routine does not fit its slot, the slot jumps to code placed in a gap.
; Entry points we do not implement hold `jmp $` (the emulator warns once, naming the routine);
; the table open_entry_points.tsv next to this file says which.
;
; Conventions of this BIOS (the documented ones, and ours where no document gives one):
; - The interrupt routine runs in register bank 0 (RB0), programs in RB1: selectgame starts the
;   cartridge in RB1, and routines that switch banks (gfxoff, gfxon, playsound) return in RB1.
;   RB0 in the interrupt: R5 = saved A, R6 = saved P1, R4 = the next tune command, R3 = frames
;   left of the current one; vsyncirq and copyregs use R0, R1, R2 and R7. RETR restores the bank.
; - Internal RAM: 3Dh collision bits of the last frame; 3Eh the clock: bits 0-5 count frames
;   0-59, bit 6 = count the clock up, bit 7 = clock stopped; 3Fh bit 7 = copy the VDC table at the
;   next VSYNC (cleared once copied), bit 6 = a tune is playing. init clears 20h-3Fh.
; - External RAM 01h / 02h: the clock's minutes / seconds (BCD).
; - The VDC table lives in external RAM from 7Fh downwards: blocks of [count n][VDC address]
;   [n data bytes for address, address+1, ...]; a count of 0 ends the table.
; - F1 is cleared by vsyncirq; waitvsync sets it and waits for that.

        cpu     8048

; entry NAME, ADDRESS: place the next code at ADDRESS; an error if the code before runs into it
entry   macro   address
        if      $ > address
        error   "code runs into the entry point at address"
        endif
        org     address
        endm

; Internal RAM and VDC addresses used here
COLLISIONS      equ     3Dh
FRAMES          equ     3Eh
FLAGS           equ     3Fh             ; bit 7: VDC table ready; 6: tune playing
ERAM_MINUTES    equ     01h
ERAM_SECONDS    equ     02h
CLOCK_STOP      equ     80h
CLOCK_FORWARD   equ     40h
TABLE_START     equ     7Fh             ; first (highest) byte of the VDC table in external RAM
VDC_CONTROL     equ     0A0h
VDC_STATUS      equ     0A1h
VDC_COLLISION   equ     0A2h
CHAR_WIDTH      equ     8               ; VDC X units from one character to the next

        org     000h
reset:  jmp     0400h                   ; cartridge start
        db      0FFh
ext_irq:
        jmp     0402h                   ; cartridge interrupt vector
vsync_hook:
        jmp     0406h                   ; irq continues here on VSYNC (a gap between the vectors)
timer_irq:
        jmp     0404h                   ; cartridge timer vector

        entry   009h
irq:    sel     rb0
        mov     r5,a
        in      a,p1
        mov     r6,a
        call    vdcenable
        mov     r0,#VDC_STATUS
        movx    a,@r0                   ; reading A1 also clears /INT
        jb3     vsync_hook
        ; not VSYNC: fall through into irqend

        entry   014h
irqend: mov     a,r6
        outl    p1,a
        mov     a,r5
        retr

        entry   01Ah
vsyncirq:
        mov     r0,#VDC_COLLISION
        movx    a,@r0
vs_collisions:
        mov     r1,#COLLISIONS
        mov     @r1,a
        inc     r1                      ; the clock's frame counter: bits 0-5 count 0-59
        mov     a,@r1
        inc     a
        mov     @r1,a
        anl     a,#3Fh
        xrl     a,#60
        jnz     vs_frame
        mov     a,@r1
        anl     a,#0C0h                 ; 60 frames: back to 0, the clock bits kept
        mov     @r1,a
        jmp     vs_frame

; 0030h: the rest of vsyncirq with A = the collision bits, for cartridges whose VSYNC hook reads A2h
; itself and jumps here (the SD-cart menu's); it must be 0030h and run everything after the read
        entry   030h
vsyncirq_collisions:
        jmp     vs_collisions
vs_frame:
        inc     r1
        clr     f1                      ; a frame has started (waitvsync)
        mov     a,@r1
        jb7     vs_copy
vs_sound:
        mov     r1,#FLAGS
        mov     a,@r1
        jb6     vs_play                 ; a tune is playing
        jmp     irqend
vs_play:
        djnz    r3,irqend               ; frames left of the current command
        jmp     040Ah                   ; the cartridge's sound hook (normally jmp soundirq)

; soundirq: the next tune command, from page 3 at R4: R1 = command byte, R2 = the byte after it
; (its parameter), then parsesnd (cartridges' own sound hooks read their own tunes the same way
; and jump to parsesnd)
        entry   044h
soundirq:
        mov     a,r4
        movp3   a,@a
        mov     r1,a
        inc     r4
        mov     a,r4
        movp3   a,@a
        mov     r2,a                    ; and on into parsesnd

; parsesnd: run one tune command (R1) with its parameter (R2); R4 points at the parameter.
; The command's highest set bit: 7 = tone for (R1 AND 7Fh) frames, R2 = its 4 bytes in page 3
; (A7, A8, A9, AA); 6 = sound control AA = R2 for (R1 AND 3Fh) frames; 5 = silence for
; (R1 AND 1Fh) frames, no parameter; 4 = jump: R4 = R2, the next command at once (040Ah);
; anything else (00h) ends the tune: sound off, iram 3Fh bit 6 cleared.
        entry   04Bh
parsesnd:
        mov     a,r1
        jb7     ps_tone
        jb6     ps_control
        jb5     ps_silence
        jb4     ps_jump
        mov     r0,#FLAGS
        mov     a,@r0
        anl     a,#0BFh                 ; the tune is over
        mov     @r0,a
ps_off: mov     r0,#0AAh
        clr     a
        movx    @r0,a                   ; sound off
        jmp     irqend
ps_silence:
        anl     a,#1Fh
        mov     r3,a
        jmp     ps_off
ps_jump:
        mov     a,r2
        mov     r4,a
        jmp     040Ah
ps_control:
        anl     a,#3Fh
        mov     r3,a
        inc     r4
        mov     r0,#0AAh
        mov     a,r2
        movx    @r0,a
        jmp     irqend
ps_tone:
        anl     a,#7Fh
        mov     r3,a
        inc     r4
        mov     r0,#0A7h
ps_copy:
        mov     a,r2
        movp3   a,@a
        movx    @r0,a                   ; A7, A8, A9 (the shift register) and AA (control)
        inc     r2
        inc     r0
        mov     a,r0
        xrl     a,#0ABh
        jnz     ps_copy
        jmp     irqend
        entry   089h
copyregs:
        mov     r0,#VDC_CONTROL
        movx    a,@r0
        mov     r7,a
        anl     a,#0D7h                 ; objects and grid off: their registers take writes
        movx    @r0,a
        anl     p1,#0EFh                ; copy mode: RAM selected (reads) ...
        orl     p1,#40h                 ; ... writes go to the VDC only
        mov     r1,#TABLE_START
cr_block:
        movx    a,@r1
        jz      cr_end
        mov     r2,a
        dec     r1
        movx    a,@r1
        mov     r0,a
        dec     r1
cr_byte:
        movx    a,@r1
        movx    @r0,a
        inc     r0
        dec     r1
        djnz    r2,cr_byte
        jmp     cr_block
cr_end: call    vdcenable
        mov     r0,#VDC_CONTROL
        mov     a,r7
        movx    @r0,a
        ret

        entry   0B0h
readkey:
        anl     p1,#0FBh                ; keyboard decoder on
        mov     r7,#0
rk_row: mov     a,r7
        orl     a,#0F0h                 ; row select, encoder lines as inputs
        outl    p2,a
        in      a,p2
        jb4     rk_next                 ; P24 = 1: no key down in this row
        cpl     a
        swap    a
        rr      a
        anl     a,#07h                  ; bit number = 7 - P25..P27
        xch     a,r7
        rl      a
        rl      a
        rl      a
        add     a,r7                    ; key = row * 8 + bit
        jmp     rk_done
rk_next:
        inc     r7
        mov     a,r7
        xrl     a,#6
        jnz     rk_row
        mov     a,#0FFh                 ; no key
rk_done:
        mov     r7,a
        orl     p1,#04h
        ret

; waitforkey's click
wk_click:
        mov     a,#tune_keyclick & 0FFh
        call    playsound
        mov     a,r7
        ret

; vsyncirq's table copy (in page 0, for its jb7)
vs_copy:
        anl     a,#7Fh
        mov     @r1,a
        call    copyregs
        jmp     vs_sound


        entry   0E7h
vdcenable:
        anl     p1,#0B7h                ; VDC selected, external bus on
        orl     p1,#10h                 ; external RAM off
        ret

        entry   0ECh
extramenable:
        anl     p1,#0AFh                ; external RAM selected, external bus on
        orl     p1,#08h                 ; VDC off
        ret

        entry   0F1h
init:   call    vdcenable
        clr     a
        mov     r0,a
in_vdc: movx    @r0,a                   ; every VDC register 0: display, grid and sound off
        djnz    r0,in_vdc
        call    clearchar
        call    extramenable
        mov     r2,#20h
        clr     a
        mov     r0,#7Fh
in_ram: movx    @r0,a
        djnz    r0,in_ram
        movx    @r0,a
        mov     r0,#3Fh
in_iram:
        mov     @r0,a
        dec     r0
        djnz    r2,in_iram
        jmp     vdcenable

; tablebcdbyte's helpers (placed in the gap after init)
tbb_digit:
        anl     a,#0Fh
        mov     r5,a
        jmp     tableprintchar
tbb_close:
        clr     a
        movx    @r0,a                   ; end of table
        mov     r1,#FLAGS
        mov     a,@r1
        orl     a,#80h
        mov     @r1,a
        ret


        entry   11Ch
gfxoff: dis     i
        sel     rb0                     ; the interrupt's bank: the program's R0 survives
        mov     r0,#VDC_CONTROL
        movx    a,@r0
        anl     a,#0DFh
        movx    @r0,a
        sel     rb1
        en      i
        ret

        entry   127h
gfxon:  dis     i
        sel     rb0
        mov     r0,#VDC_CONTROL
        movx    a,@r0
        orl     a,#20h
        movx    @r0,a
        sel     rb1
        en      i
        ret

        entry   132h
tableend:
        call    extramenable
        clr     a
        movx    @r0,a                   ; end of table
        mov     r0,#FLAGS
        mov     a,@r0
        orl     a,#80h
        mov     @r0,a
        ret

        entry   13Dh
waitforkey:
wk_up:  call    readkey
        inc     a
        jnz     wk_up                   ; first wait until every key is up
wk_down:
        call    readkey
        jb7     wk_down
        jmp     wk_click

        entry   14Bh
calcchar23:
        mov     a,r4
        clr     c
        rrc     a                       ; Y / 2
        xch     a,r5                    ; R5 = Y / 2, A = character code
        rl      a
        rl      a
        rlc     a                       ; C = code bit 5 (pointer bit 8), A bits 7-3 = code bits 4-0
        xch     a,r6
        anl     a,#0Eh
        jnc     cc_low
        inc     a
cc_low: xch     a,r6                    ; R6 = colour bits + (8 * code) bit 8
        anl     a,#0F8h
        cpl     a
        add     a,r5
        cpl     a                       ; (8 * code - Y / 2) low byte, C = borrow
        mov     r5,a
        jnc     cc_done
        xch     a,r6
        xrl     a,#01h                  ; the borrow comes out of pointer bit 8
        xch     a,r6
cc_done:
        ret

; the end of random (placed in the gap after calcchar23)
random_end:
        mov     r2,a
        mov     a,r4
        mov     r3,a
        ret

        entry   16Bh
clearchar:
        mov     r0,#10h
        mov     r2,#70h
        mov     a,#0F8h                 ; below the last line drawn
cl_loop:
        movx    @r0,a
        inc     r0
        djnz    r2,cl_loop
        ret

        entry   176h
waitvsync:
        en      i
        clr     f1
        cpl     f1
        jf1     $                       ; vsyncirq clears F1
        ret

        entry   17Ch
tablebcdbyte:
        mov     r2,a
        call    extramenable
        mov     r0,#TABLE_START
        mov     a,#8
        movx    @r0,a
        dec     r0
        mov     a,r1
        movx    @r0,a
        dec     r0
        mov     a,r2
        swap    a
        call    tbb_digit
        mov     a,r2
        call    tbb_digit
        jmp     tbb_close

        entry   197h
tableprintchar:
        mov     a,r4
        movx    @r0,a
        dec     r0
        mov     a,r3
        movx    @r0,a
        add     a,#CHAR_WIDTH
        mov     r3,a
        dec     r0
        jmp     tablechar23

        entry   1A2h
playsound:
        dis     i
        sel     rb0                     ; the interrupt's bank: the program's registers survive
        mov     r4,a                    ; the first command
        mov     r3,#1                   ; read at the next VSYNC
        mov     r0,#FLAGS
        mov     a,@r0
        orl     a,#40h
        mov     @r0,a
        sel     rb1
        en      i
        ret

; doclock: once the frame counter (iram 3Eh bits 0-5) is at 59 and the clock runs, one second up
; or down (3Eh bit 6) in external RAM 01h (minutes) / 02h (seconds), BCD; reaching 00:00 down stops
; the clock (bit 7); then the four digits go into the VDC table (copied at the next VSYNC).
; The display (initclock): quad 0 at x holds minutes tens, colon, seconds units; quad 1 at x + 8
; holds minutes units, seconds tens: quad characters are 16 units apart, so the two interleave.
        entry   1B0h
doclock:
        mov     r0,#FRAMES
        mov     a,@r0
        jb7     dc_done                 ; stopped
        anl     a,#3Fh
        xrl     a,#59
        jnz     dc_done
        call    extramenable
        mov     r1,#ERAM_SECONDS
        mov     a,@r0
        jb6     dc_up
        movx    a,@r1
        jnz     dc_down
        mov     a,#60h                  ; :00 down is :59 and a minute less
        call    bcd_down
        movx    @r1,a
        dec     r1
        movx    a,@r1
        call    bcd_down
        movx    @r1,a
        jmp     dc_show
dc_down:
        call    bcd_down
        movx    @r1,a
        jnz     dc_shown
        dec     r1
        movx    a,@r1
        jnz     dc_shown
        mov     a,@r0                   ; 00:00 counting down: the clock stops
        orl     a,#CLOCK_STOP
        mov     @r0,a
        jmp     dc_show
dc_up:  movx    a,@r1
        add     a,#1
        da      a
        movx    @r1,a
        xrl     a,#60h
        jnz     dc_shown
        movx    @r1,a                   ; :60 is :00 and a minute more
        dec     r1
        movx    a,@r1
        add     a,#1
        da      a
        movx    @r1,a
dc_shown:
        jmp     dc_show
dc_done:
        ret

; doclock's display: the four digits into the VDC table
dc_show:
        mov     r0,#TABLE_START
        mov     r1,#ERAM_MINUTES
        movx    a,@r1
        swap    a
        mov     r2,#42h                 ; quad 0, character 0
        call    dc_digit
        movx    a,@r1
        mov     r2,#52h                 ; quad 1, character 0
        call    dc_digit
        inc     r1
        movx    a,@r1
        swap    a
        mov     r2,#56h                 ; quad 1, character 1
        call    dc_digit
        movx    a,@r1
        mov     r2,#4Ah                 ; quad 0, character 2
        call    dc_digit
        jmp     tableend

; dc_digit: queue the digit in A's low nibble into the character whose byte 2 is at VDC R2
dc_digit:
        mov     r5,a
        call    tableput2
        mov     a,r2
        movx    @r0,a
        dec     r0
        mov     a,r5
        jmp     tablebcdnibble

; bcd_down: A = the BCD byte A minus 1 (R2 clobbered)
bcd_down:
        dec     a
        mov     r2,a
        anl     a,#0Fh
        xrl     a,#0Fh
        jnz     bd_done
        mov     a,r2
        add     a,#0FAh                 ; x0h - 1 = (x-1)9h
        ret
bd_done:
        mov     a,r2
        ret

        entry   229h
tablebcdnibble:
        anl     a,#0Fh
        mov     r5,a                    ; and on into tablechar23

        entry   22Ch
tablechar23:
        call    calcchar23
        mov     a,r5
        movx    @r0,a
        dec     r0
        mov     a,r6
        movx    @r0,a
        dec     r0
        ret

        entry   235h
tableput2:
        mov     a,#2
        movx    @r0,a
        dec     r0
        ret

        entry   23Ah
initclock:
        mov     r0,#40h                 ; quad 0 at (x, y)
        mov     a,r4
        movx    @r0,a
        inc     r0
        mov     a,r3
        movx    @r0,a
        mov     r0,#50h                 ; quad 1 at (x + 8, y)
        mov     a,r4
        movx    @r0,a
        inc     r0
        mov     a,r3
        add     a,#CHAR_WIDTH
        movx    @r0,a                   ; and on into its characters
; initclock's characters: the colon in quad 0 character 1, every other one blank (doclock
; writes the digits)
ic_chars:
        mov     r0,#42h
ic_loop:
        mov     r5,#0Ch                 ; blank
        mov     a,r0
        xrl     a,#46h
        jnz     ic_put
        mov     r5,#0Ah                 ; colon
ic_put: call    putchar23
        inc     r0
        inc     r0
        mov     a,r0
        xrl     a,#62h
        jnz     ic_loop
        ret


        entry   261h
putchar23:
        call    calcchar23
        mov     a,r5
        movx    @r0,a
        inc     r0
        mov     a,r6
        movx    @r0,a
        inc     r0
        ret

        entry   26Ah
bittest:
        mov     r2,a
        rr      a
        rr      a
        rr      a
        anl     a,#1Fh                  ; byte number = bit number / 8
        cpl     a
        inc     a
        add     a,r1
        mov     r1,a                    ; the field ends at R1: byte 0 is the last one
        mov     a,r2
        anl     a,#07h
        add     a,#bit_masks & 0FFh
        movp    a,@a
        mov     r2,a
        movx    a,@r1
        anl     a,r2
        ret

        entry   280h
bitclear:
        call    bittest
        jz      bc_done
bit_flip:
        movx    a,@r1
        xrl     a,r2
        movx    @r1,a
        mov     a,r2
bc_done:
        ret

        entry   28Ah
bitset: call    bittest
        jnz     bs_done
        movx    a,@r1
        xrl     a,r2
        movx    @r1,a
        clr     a
bs_done:
        ret

; random (ours): nibblemixer on the timer's low nibble with R2's maximum, then on its high nibble
; with R7's; R4 keeps the first result meanwhile
        entry   293h
random: mov     a,r7
        mov     r4,a
        mov     a,r2
        mov     r7,a
        mov     a,t
        mov     r5,a
        call    nibblemixer
        xch     a,r4
        mov     r7,a
        mov     a,t
        swap    a
        mov     r5,a
        call    nibblemixer
        jmp     random_end

; nibblemixer (ours): the low nibble of R5 through the table below, then reduced to 0..maximum by
; subtracting maximum + 1 while it is larger (R7 = NOT maximum: adding it subtracts maximum + 1)
        entry   2A4h
nibblemixer:
        mov     a,r5
        anl     a,#0Fh
        add     a,#nibble_table & 0FFh
        movp    a,@a
nm_reduce:
        mov     r3,a
        add     a,r7
        jc      nm_reduce
        mov     a,r3
        ret

        entry   2B3h
nibble_table:
        db      7, 12, 3, 14, 9, 4, 5, 10, 15, 2, 13, 6, 1, 8, 11
plusselectgame:
        db      0                       ; the last entry, 0, is a NOP: plusselectgame runs on into
                                        ; selectgame (g7kbios 14.2, 17.32: identical on a G7000)

        entry   2C3h
selectgame:
        dis     i
        call    init
        mov     r0,#10h                 ; first character register
        mov     r3,#28h
        mov     r4,#70h
        mov     r6,#0Eh                 ; white
        mov     r1,#sg_text & 0FFh
sg_loop:
        mov     a,r1
        movp    a,@a
        jb7     sg_shown
        mov     r5,a
        call    printchar
        inc     r1
        jmp     sg_loop
sg_shown:
        call    gfxon                   ; from here on RB1
        call    waitforkey
        call    gfxoff                  ; the game starts on an empty screen, gfx on
        call    clearchar
        call    gfxon
        mov     a,r7                    ; the key
        jmp     0408h
sg_text:
        ; S E L E C T space G A M E, in character codes
        db      19h, 12h, 0Eh, 12h, 23h, 14h, 0Ch, 1Ch, 20h, 26h, 12h, 0FFh

; bittest's masks (page 2, for its movp)
bit_masks:
        db      01h, 02h, 04h, 08h, 10h, 20h, 40h, 80h

; Page 3: the ten tones of parsesnd (A7, A8, A9, AA each; a tone command's parameter is the offset
; 4 * n), then our tunes at the documented tune pointers (28h-6Ah). A tune is commands (parsesnd):
; TONE n for f frames, CONTROL value for f frames, SILENCE for f frames, and 00h at its end.
        entry   300h
sound_tones:
        db      0FFh, 0FFh, 0FFh, 0ACh  ; 0: steady (no tone)
        db      0AAh, 0AAh, 0AAh, 0ACh  ; 1: period 2 bits, fast clock (highest tone)
        db      0CCh, 0CCh, 0CCh, 0ACh  ; 2: period 4
        db      0E3h, 08Eh, 038h, 0ACh  ; 3: period 6
        db      0F0h, 0F0h, 0F0h, 0ACh  ; 4: period 8
        db      0FCh, 00Fh, 0C0h, 0ACh  ; 5: period 12
        db      0FFh, 0F0h, 000h, 0ACh  ; 6: period 24 (lowest tone)
        db      0FFh, 0FFh, 0FFh, 09Ch  ; 7: noise, slow clock
        db      0FFh, 000h, 0FFh, 09Ah  ; 8: noise, slow clock, quieter
        db      0F0h, 0F0h, 0F0h, 08Ch  ; 9: period 8, slow clock

; the tune commands
tone    macro   number, frames
        db      80h | frames, 4 * number
        endm
control macro   value, frames
        db      40h | frames, value
        endm
silence macro   frames
        db      20h | frames
        endm

; tune_at OFFSET: the next tune starts at 300h + OFFSET (the documented tune_* pointers of
; g7000.h); the bytes up to it are 00h (the end command)
tune_at macro   offset
        if      $ > 300h + offset
        error   "a tune runs into the next one"
        endif
        db      (300h + offset - $) dup (00h)
        endm

        entry   328h
tune_beep_error:
        tone    5, 6
        silence 2
        tone    5, 6
        db      00h
        tune_at 2Eh
tune_explode:
        tone    7, 20
        control 9Ah, 10
        control 96h, 10
        control 93h, 10
        db      00h
        tune_at 3Ch
tune_alarm:
        tone    2, 8
        silence 4
        tone    2, 8
        silence 4
        tone    2, 8
        silence 4
        db      00h
        tune_at 4Ah
tune_select:
        tone    4, 6
        tone    3, 6
        tone    2, 12
        db      00h
        tune_at 56h
tune_keyclick:
        tone    1, 2
        db      00h
        tune_at 5Ah
tune_buzz:
        tone    6, 20
        db      00h
        tune_at 5Eh
tune_select2:
        tone    2, 6
        tone    3, 6
        tone    4, 12
        db      00h
        tune_at 6Ah
tune_shoot:
        tone    1, 2
        tone    2, 2
        tone    3, 2
        tone    7, 4
        db      00h

; the rest of getjoystick (placed in the gap after the tunes)
gj_rest:
        rrc     a
        jnc     gj_down
        inc     r3
gj_down:
        rrc     a
        jnc     gj_left
        dec     r2
        jmp     gj_left

        entry   37Fh
bank02: anl     p1,#0FEh
        jmp     0408h

        entry   383h
bank01: anl     p1,#0FDh
        jmp     0408h

        entry   387h
bank0:  anl     p1,#0FCh
        jmp     0408h

        entry   38Bh
bank3:  orl     p1,#03h
        jmp     0408h

; getjoystick: the decoder and the bus on with P1 kept in R0 (4 instructions, as KTAA repeats them
; before it calls getjoystick_p17 at 0395h), the stick read, P1 restored, the raw bits left in R1
; (programs test them themselves), then dx, dy and fire
        entry   38Fh
getjoystick:
        in      a,p1
        mov     r0,a                    ; P1, restored after the read
        orl     p1,#3Ch
        anl     p1,#0BBh                ; keyboard/joystick decoder on, external bus on

        entry   395h
getjoystick_p17:
        mov     a,r1
        outl    p2,a                    ; stick select
        ins     a,bus
        xch     a,r0
        outl    p1,a
        mov     a,r0
        mov     r1,a                    ; the raw bits, 0 = pressed
        cpl     a                       ; bits now 1 = pressed: up, right, down, left, fire
        mov     r2,#0
        mov     r3,#0
        rrc     a
        jnc     gj_up
        dec     r3
gj_up:  rrc     a
        jnc     gj_right
        inc     r2
gj_right:
        jmp     gj_rest

        entry   3B1h
decodejoystick:
        mov     a,r2
        inc     a
        mov     r0,a
        rl      a
        add     a,r0                    ; (dx + 1) * 3
        add     a,r3
        inc     a                       ; + dy + 1
        add     a,#dj_directions & 0FFh
        movp    a,@a
        mov     r1,a
        ret
dj_directions:
        ; by dx = -1, 0, 1, then dy = -1 (up), 0, 1 (down); 8 = no direction
        db      3, 4, 5, 2, 8, 6, 1, 0, 7

; the end of getjoystick: fire
gj_left:
        rrc     a
        clr     f0
        jnc     gj_fire
        cpl     f0
gj_fire:
        ret

        entry   3CFh
divide: mov     r4,#0FFh
        mov     a,r2
dv_loop:
        inc     r4
        mov     r5,a
        cpl     a
        add     a,r3                    ; C = 1 when R3 > what is left
        cpl     a
        jnc     dv_loop
        mov     a,r5
        ret

        entry   3DDh
multiply:
        clr     a
        inc     r2
        jmp     ml_count
ml_add: add     a,r3
ml_count:
        djnz    r2,ml_add
        ret

        entry   3EAh
printchar:
        mov     a,r4
        movx    @r0,a
        inc     r0
        mov     a,r3
        movx    @r0,a
        add     a,#CHAR_WIDTH
        mov     r3,a
        inc     r0
        jmp     putchar23

        entry   3F8h
        db      "HB OPEN", 01h          ; tag and version
