; hilbridge demo cartridge: what the simulated adapter's slot holds unless told otherwise.
; Shows a blue screen with a white grid, and calls the VSYNC hook 0406h once per frame.
; The same program starts every 2 KB bank (demo.py places it), so any bank it boots in runs it.

        cpu     8048
        org     400h
        jmp     main            ; 0400h reset (the boot BIOS jumps here)
        jmp     irq             ; 0402h /INT from the VDC
        nop                     ; 0404h timer interrupt: unused
        nop
vsync:  ret                     ; 0406h VSYNC hook, called once per frame (what FRAME_SYNC watches)

main:   anl     p1,#0B7h        ; VDC and external bus enabled (P13 = P16 = 0), bank kept
        mov     a,#0FFh
        mov     r0,#0C0h        ; horizontal grid segments C0h-C8h: all on
        mov     r2,#9
hgrid:  movx    @r0,a
        inc     r0
        djnz    r2,hgrid
        mov     r0,#0E0h        ; vertical grid segments E0h-E9h: all on
        mov     r2,#10
vgrid:  movx    @r0,a
        inc     r0
        djnz    r2,vgrid
        mov     r0,#0A3h        ; colours: background blue (bits 3-5), grid white (bits 0-2, 6)
        mov     a,#4Fh
        movx    @r0,a
        mov     r0,#0A0h        ; control: grid on
        mov     a,#08h
        movx    @r0,a
        en      i
idle:   jmp     idle

irq:    mov     r0,#0A1h        ; read the VDC status, which acknowledges /INT
        movx    a,@r0
        call    vsync
        retr
