// UF2 reading for the harness: the flash contents a boot ROM would write (checked in Python too).
const BLOCK = 512;
const MAGIC0 = 0x0a324655;
const MAGIC1 = 0x9e5d5157;
const FAMILY_RP2040 = 0xe48bff56;
const FLASH_BASE = 0x10000000;

export function flashFromUf2(data) {
  if (data.length % BLOCK) throw new Error(`UF2 of ${data.length} bytes is not whole blocks`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const blocks = [];
  for (let offset = 0; offset < data.length; offset += BLOCK) {
    const magic0 = view.getUint32(offset, true);
    const magic1 = view.getUint32(offset + 4, true);
    const address = view.getUint32(offset + 12, true);
    const size = view.getUint32(offset + 16, true);
    const family = view.getUint32(offset + 28, true);
    if (magic0 !== MAGIC0 || magic1 !== MAGIC1) throw new Error(`UF2 block at ${offset}: bad magic`);
    if (family !== FAMILY_RP2040) throw new Error(`UF2 block at ${offset}: not an RP2040 block`);
    blocks.push({ address: address - FLASH_BASE, payload: data.subarray(offset + 32, offset + 32 + size) });
  }
  return blocks;
}
