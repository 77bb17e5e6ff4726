// Package googlefake is a local stand-in for the Google endpoints the uploader calls, faithful to
// their public request and response shapes so that the clients in uploader/google can be tested
// end to end without Google:
//
//   - Google OAuth: an authorize endpoint that approves at once (GET /o/oauth2/v2/auth → 302 back
//     with a code), the token endpoint (POST /token: authorization_code with PKCE verification,
//     refresh_token, invalid_grant after revocation) and the revocation endpoint (POST /revoke:
//     200, or 400 {"error":"invalid_token"} for an unknown or already revoked token).
//   - The Data Manager API: POST /v1/events:ingest with Google's fast-fail validation (the whole
//     request is rejected with a BadRequest naming events[i]; unknown JSON fields are rejected the
//     way Google's front end does) and GET /v1/requestStatus:retrieve with per-request diagnostics
//     that stay PROCESSING for Config.ProcessingDelay, then turn SUCCESS, PARTIAL_SUCCESS or FAILED
//     with per-reason counts written as strings.
//   - Two Google Ads API calls: GET /v{N}/customers:listAccessibleCustomers and
//     POST /v{N}/customers/{id}/googleAds:search for the conversion_action and customer_client
//     queries, with pageToken pagination and the login-customer-id header.
//
// API routes check the bearer token (401 UNAUTHENTICATED for a missing, unknown, expired or
// revoked token; 403 ACCESS_TOKEN_SCOPE_INSUFFICIENT when the grant lacks the route's scope).
// Errors use the AIP-193 envelope (google.rpc.ErrorInfo, RetryInfo, RequestInfo, BadRequest; a
// GoogleAdsFailure detail on Ads routes).
//
// Outcomes are scripted through the click IDs of the events, so a test (or a local demo) states
// the result in its data: "fake-<REASON>-…" fails asynchronously with
// PROCESSING_ERROR_REASON_<REASON> (any reason string, known or not), "warn-<REASON>-…" succeeds
// with a PROCESSING_WARNING_REASON_<REASON> warning, "failed-…" fails asynchronously without any
// error count (FAILED with no errorInfo, which the platform may report), "invalid-…" fails
// fast-fail validation with INVALID_FORMAT at that event's index, and anything else succeeds. The same transactionId and
// productDestinationId accepted twice yields DUPLICATE_TRANSACTION_ID on the later request.
// FailIngest, FailRetrieve and FailRevocation script HTTP failures; Requests records every request
// so tests can assert what was sent.
//
// A Fake is an http.Handler, safe for concurrent use; serve it with httptest.NewServer or any
// http.Server and point google.EndpointsAt at its URL.
package googlefake
