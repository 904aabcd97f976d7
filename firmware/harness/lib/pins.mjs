// The adapter's pin map, read from firmware/board/pins.tsv (the one source the firmware build uses too).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PINS_TSV = path.resolve(HERE, '../../board/pins.tsv');

/** symbol -> GPIO number */
export function loadPins(file = PINS_TSV) {
  const pins = {};
  let header = null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const fields = line.split('\t');
    if (!header) {
      header = fields;
      continue;
    }
    const row = Object.fromEntries(header.map((name, i) => [name, fields[i]]));
    pins[row.symbol] = Number(row.gpio);
  }
  return pins;
}
