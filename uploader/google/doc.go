// Package google holds typed clients for the three Google APIs the uploader talks to: Google OAuth
// (consent, token refresh, revocation), the Data Manager API (events:ingest and
// requestStatus:retrieve) and the two Google Ads API discovery calls (accessible customers and
// conversion actions by GAQL).
//
// Every call takes an oauth2.TokenSource so the caller decides whose credentials are used. Errors
// from Google come back as *APIError (the AIP-193 envelope, parsed) and Classify maps any error to
// the retry class the dispatcher acts on. Reason strings Google adds later are kept verbatim: the
// clients never fail on a value they do not know.
package google
