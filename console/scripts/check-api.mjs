// Fails when src/api/schema.d.ts does not type what openapi-typescript makes of
// query/openapi/openapi.yaml today, so the console can only call what the OpenAPI documents.
// Fix: `npm run gen:api` in console/, and commit the file.
//
// Only the types are compared: a change of a description (the JSDoc comments) leaves the client as
// it was, so it does not fail the build; a new or changed path, parameter, field or enum does.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const spec = new URL('../../query/openapi/openapi.yaml', import.meta.url);
const committed = fileURLToPath(new URL('../src/api/schema.d.ts', import.meta.url));

export const typesOnly = (ts) => ts.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '').replace(/\s+/g, ' ').trim();

const fresh = typesOnly(astToString(await openapiTS(spec)));
if (typesOnly(readFileSync(committed, 'utf8')) !== fresh) {
  console.error('src/api/schema.d.ts is stale: query/openapi/openapi.yaml changed a path, parameter or schema; run `npm run gen:api` in console/ and commit src/api/schema.d.ts');
  process.exit(1);
}
console.log('src/api/schema.d.ts types query/openapi/openapi.yaml');
