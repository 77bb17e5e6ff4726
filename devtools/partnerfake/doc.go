// Package partnerfake is a local fake of the platform's Partner API (GraphQL) and a deterministic
// data generator behind it.
//
// Generate builds a Dataset (apps, shops, app events, transactions) from a GenConfig and a seed;
// the Dataset's Truth records what the generator decided (plans, trials, paid periods, exclusions)
// so metric code can be checked by hand. NewServer serves a Dataset over
// POST /{org_id}/api/{version}/graphql.json with the public response shapes, cursors, page limits,
// 429 rate limiting and scriptable faults. README.md lists what is and is not implemented.
package partnerfake
