package docs

// Preludes set up, before a document's first block, what the document's own text says its reader
// already has. Each mirrors a sentence of its document (quoted beside it); change both together.

// cliEnv: "Every other page's examples assume this shell." (GETTING_STARTED.md, step 2)
const cliEnv = `eval "$(deploy/local/cli-env)"
`

// workspace: the workspace, app and admin key of GETTING_STARTED.md, step 3, made the same way.
const workspace = cliEnv + `SUFFIX=$(cut -c1-8 /proc/sys/kernel/random/uuid)
TEAM=acme-$SUFFIX
APP_ID=upsell-$SUFFIX
revtrack admin app put "$APP_ID" "Upsell Wizard" --platform-id gid://partners/App/1001 >/dev/null
revtrack admin workspace create "$TEAM" --name "Acme Apps" --apps "$APP_ID" >/dev/null
API_KEY=$(revtrack admin key create "$TEAM" --name docs-test --scope admin | jq -r .key)
`

// demo: what `make run` does and prints before the README's examples (the demo workspace seeded by
// revtrack-dev and synced from the partner API fake), set as the README says:
// "export BASE_URL=… API_KEY=… TEAM=… TRACKER_PK=… TRACKER_SK=… with the values of the ready line".
const demo = cliEnv + `seed=$(revtrack-dev seed-demo)
field() { sed -n "s/.*\<$1=\([^ ]*\).*/\1/p" <<<"$seed"; }
export TEAM=$(field team) API_KEY=$(field api_key) TRACKER_PK=$(field tracker_pk) TRACKER_SK=$(field tracker_sk)
revtrack admin sync run "$TEAM" >/dev/null
`

// demoTracking: "once revtrack is ready, `make run` sends through the edge (`revtrack-dev
// seed-tracking`) the visits and verified install, trial and paid events" (README.md), as the run
// script sends them, so the README's attribution example answers with channel rows.
const demoTracking = `revtrack-dev seed-tracking --base-url "$BASE_URL" --public-key "$TRACKER_PK" --private-key "$TRACKER_SK" >/dev/null
`

// demoLanded waits, as a reader who waited for the ready line does not have to, until the demo
// sync's records have landed: make run prints the line a few seconds after the sync returns.
const demoLanded = `for _ in $(seq 60); do
	curl -fsS -H "Authorization: Bearer $API_KEY" "$BASE_URL/api/v1/summary" | jq -e '.byCurrency | length > 0' >/dev/null && break
	sleep 1
done
`

var preludes = map[string]string{
	// "The examples below run in a second terminal, … prepared with eval "$(deploy/local/cli-env)" …
	// and the ready line's keys"
	"README.md": demo + demoTracking + demoLanded,
	// Its step 2 is the environment itself.
	"docs/GETTING_STARTED.md": "",
	// "The examples below run in the shell of that page … with its TEAM, APP_ID and API_KEY set"
	"docs/TRACKING.md": workspace,
	// "Run it in the shell of GETTING_STARTED.md, step 2"; the walkthrough makes its own workspace.
	"docs/ADS_UPLOAD.md": cliEnv,
	// "Against make run, in the shell of GETTING_STARTED.md (step 2) with the ready line's API_KEY"
	"docs/MCP.md": demo,
	// "In the shell of GETTING_STARTED.md (steps 2 and 3: TEAM, BASE_URL, API_KEY)"
	"docs/PLATFORM_DATA.md": workspace,
	// "In the shell of GETTING_STARTED.md (steps 2 and 3)"
	"docs/REPORTING_PERFORMANCE.md": workspace,
	// "here in the shell of GETTING_STARTED.md, steps 2 and 3: BASE_URL, API_KEY, TEAM"
	"docs/ANALYSTS.md": workspace,
	// "# BASE_URL: docs/GETTING_STARTED.md, step 2"
	"docs/API.md": cliEnv,
}
