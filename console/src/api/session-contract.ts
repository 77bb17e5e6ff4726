// The session routes of issue 15's contract (docs/API.md "Console sessions"), typed here only while
// query/openapi/openapi.yaml does not describe them yet. When the OpenAPI has them, `npm run gen:api`
// brings them into schema.d.ts and this file goes: client.ts takes `paths` alone.
import type { components } from './schema';

type Err = { content: { 'application/json': components['schemas']['Error'] } };
type JSONBody<T> = { content: { 'application/json': T } };

export type SessionBody = {
  user: { id: string; email: string; name: string };
  workspaces: { id: string; slug: string; name: string; role: 'owner' | 'admin' | 'member' }[];
  csrfToken: string;
};

type Op<Req, Res, Ok extends number = 200> = {
  parameters: { query?: never; header?: never; path?: never; cookie?: never };
  requestBody: Req extends never ? never : JSONBody<Req>;
  responses: { [K in Ok]: Res extends void ? { content?: never } : JSONBody<Res> } & {
    400: Err; 401: Err; 403: Err; 429: Err; 503: Err;
  };
};
type Path<M> = { parameters: { query?: never; header?: never; path?: never; cookie?: never } } & M;

export interface sessionPaths {
  '/api/admin/session': Path<{
    get: Omit<Op<never, SessionBody>, 'requestBody'> & { requestBody?: never };
    post: Op<{ email: string; password: string }, SessionBody>;
    delete: Omit<Op<never, void, 204>, 'requestBody'> & { requestBody?: never };
  }>;
  '/api/admin/account/password': Path<{ put: Op<{ currentPassword: string; newPassword: string }, void, 204> }>;
}
