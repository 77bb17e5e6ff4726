// Fails when src/api/schema.d.ts is not what openapi-typescript makes of query/openapi/openapi.yaml
// today, so the console can only call what the OpenAPI documents. Fix: `npm run gen:api`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const spec = new URL('../../query/openapi/openapi.yaml', import.meta.url);
const committed = fileURLToPath(new URL('../src/api/schema.d.ts', import.meta.url));
const fresh = astToString(await openapiTS(spec));
const header = readFileSync(committed, 'utf8');
// The CLI writes a banner before the AST; compare the generated body only.
if (!header.endsWith(fresh)) {
  console.error('src/api/schema.d.ts is stale: run `npm run gen:api` in console/ and commit src/api/schema.d.ts');
  process.exit(1);
}
console.log('src/api/schema.d.ts matches query/openapi/openapi.yaml');
