// tracker.js stays small: at most 5 KB gzipped, as served (readable source, no build step).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';

test('tracker.js is at most 5120 bytes gzipped', () => {
  const src = fs.readFileSync(new URL('../tracker.js', import.meta.url));
  const gz = zlib.gzipSync(src).length;
  assert.ok(gz <= 5120, `gzipped size ${gz} > 5120`);
});
