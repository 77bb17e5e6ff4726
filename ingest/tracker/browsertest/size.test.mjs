// tracker.js as served (tracker.min.js, minified at build time) is at most 3 KB on the wire with gzip
// and with brotli, at the levels the edge compresses it with (ingest/script.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';

test('tracker.js is at most 3072 bytes with gzip and with brotli', () => {
  const src = fs.readFileSync(new URL('../tracker.min.js', import.meta.url));
  const gz = zlib.gzipSync(src, { level: 9 }).length;
  const br = zlib.brotliCompressSync(src, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  assert.ok(gz <= 3072, `gzipped size ${gz} > 3072`);
  assert.ok(br <= 3072, `brotli size ${br} > 3072`);
});
