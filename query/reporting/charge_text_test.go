package reporting

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv/pipeline"
)

// chargeSQLBefore is what ClickHouse computed per charge before the text copy (migration 0030)
// moved it to Go (charge_text.go): the states on two dates, the end, the candidate rule and the
// payment evidence, as selectChargeFacts' predecessor wrote them. Arguments: end(A) × 16, end(B) ×
// 16, end(A), end(B), annual start, recent start, end(A) twice, then end(A), end(A), end(B), end(B),
// end(B) for the candidate rule. The outer query selects currency because 18.16 resolves a
// lambda's captured column only while the query still needs that column.
const chargeSQLBefore = `SELECT id, currency, last_a, last_b, first_activated, uninstall_a, uninstall_b, gone, paid_at, paid_currency,
    states_derived = 0
    OR ((last_a % 16 IN (2, 3, 4) OR (last_a = 0 AND activated > 0 AND activated < ? AND (ended = 0 OR ended >= ?)))
        AND NOT (first_activated > 0 AND uninstall_a >= first_activated AND toUInt64(uninstall_a) * 16 + 8 > last_a))
    OR ((last_b % 16 IN (2, 3, 4) OR (last_b = 0 AND activated > 0 AND activated < ? AND (ended = 0 OR ended >= ?)))
        AND NOT (first_activated > 0 AND uninstall_b >= first_activated AND toUInt64(uninstall_b) * 16 + 8 > last_b))
    OR ((first_activated > 0 OR activated > 0) AND gone > 0 AND toInt64(gone) >= toInt64(?) - if(annual, 395, 45) * 86400) AS candidate
FROM (
    SELECT id, currency, activated, ended, annual, states_derived,
        arrayReduce('max', arrayFilter(k -> k < ?, state_events)) AS last_a,
        arrayReduce('max', arrayFilter(k -> k < ?, state_events)) AS last_b,
        toUInt32(intDiv(arrayReduce('min', arrayFilter(k -> k % 16 = 2, state_events)), 16)) AS first_activated,
        toUInt32(arrayReduce('max', arrayFilter(t -> t < ?, customer_uninstalls))) AS uninstall_a,
        toUInt32(arrayReduce('max', arrayFilter(t -> t < ?, customer_uninstalls))) AS uninstall_b,
        if(empty(state_events), ended, toUInt32(intDiv(arrayReduce('min', arrayFilter(k -> k % 16 IN (5, 6, 7), state_events)), 16))) AS own_end,
        if(first_activated = 0, 0,
            toUInt32(arrayReduce('min', arrayFilter(t -> t >= first_activated, customer_uninstalls)))) AS uninstall_end,
        if(own_end = 0, uninstall_end, if(uninstall_end = 0, own_end, least(own_end, uninstall_end))) AS gone,
        if(annual, ?, ?) AS paid_from,
        arrayStringConcat(arrayMap(t -> toString(t), arrayFilter(t -> t >= paid_from AND t < ?, payments)), ',') AS paid_at,
        if(arrayAll(c -> c = currency, payment_currencies), emptyArrayString(),
            arrayFilter((c, t) -> t >= paid_from AND t < ?, payment_currencies, payments)) AS paid_currency
    FROM charge_arrays
)
ORDER BY id`

// TestChargeArraysDecideAsTheSQLDid runs the Go that replaced the per-row SQL (charge_text.go) and
// that SQL on ClickHouse 18.16 over the same random charges, and compares every value, so the
// reports' answers cannot have moved with it (the golden datasets check the answers themselves).
func TestChargeArraysDecideAsTheSQLDid(t *testing.T) {
	db := pipeline.Migrated(t)
	c := ctx(t)
	if err := db.Conn.Exec(c, `CREATE TABLE charge_arrays (id UInt32, currency String, activated UInt32, ended UInt32, annual UInt8,
    states_derived UInt8, state_events Array(UInt64), customer_uninstalls Array(UInt32), payments Array(UInt32),
    payment_currencies Array(String)) ENGINE = Memory`); err != nil {
		t.Fatal(err)
	}
	const endA, endB = 1_795_737_600, 1_793_145_600 // 2026-11-27 and 2026-10-28, 00:00 UTC
	rng := rand.New(rand.NewPCG(1, 2))
	instant := func() uint32 { // from a year and a half before B to a month after A
		return uint32(endB - 540*86400 + rng.IntN(600*86400))
	}
	type row struct {
		id               uint32
		currency         string
		activated, ended uint32
		annual, derived  uint8
		events           []uint64
		uninstalls, paid []uint32
		currencies       []string
	}
	var rows []row
	batch, err := db.Conn.PrepareBatch(c, "INSERT INTO charge_arrays (id, currency, activated, ended, annual, states_derived, state_events, customer_uninstalls, payments, payment_currencies)")
	if err != nil {
		t.Fatal(err)
	}
	for id := range uint32(5000) {
		r := row{id: id, currency: "USD", annual: uint8(rng.IntN(4) / 3), derived: uint8(min(1, rng.IntN(10)))}
		if rng.IntN(2) == 0 {
			r.activated = instant()
		}
		if rng.IntN(3) == 0 {
			r.ended = instant()
		}
		if r.derived == 1 {
			for range rng.IntN(6) {
				r.events = append(r.events, uint64(instant())*eventKeyBase+uint64(1+rng.IntN(7)))
			}
		}
		for range rng.IntN(3) {
			r.uninstalls = append(r.uninstalls, instant())
		}
		mixed := rng.IntN(8) == 0
		r.currencies = []string{}
		for range rng.IntN(7) {
			r.paid = append(r.paid, instant())
			r.currencies = append(r.currencies, map[bool]string{false: "USD", true: []string{"USD", "EUR"}[rng.IntN(2)]}[mixed])
		}
		rows = append(rows, r)
		if err := batch.Append(r.id, r.currency, r.activated, r.ended, r.annual, r.derived, r.events, r.uninstalls, r.paid,
			r.currencies); err != nil {
			t.Fatal(err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	recentFrom, annualFrom := uint32(endB-monthlyEvidenceDays*86400), uint32(endB-annualEvidenceDays*86400)
	res, err := db.Conn.Query(c, chargeSQLBefore, endA, endA, endB, endB, endB,
		uint64(endA)*eventKeyBase, uint64(endB)*eventKeyBase, endA, endB, annualFrom, recentFrom, endA, endA)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var arrays chargeArrays
	candidates := 0
	for res.Next() {
		var (
			id, first, unA, unB, gone uint32
			currency                  string
			lastA, lastB              uint64
			paidAt                    string
			paidCur                   []string
			candidate                 uint8
		)
		if err := res.Scan(&id, &currency, &lastA, &lastB, &first, &unA, &unB, &gone, &paidAt, &paidCur, &candidate); err != nil {
			t.Fatal(err)
		}
		r := rows[id]
		join := func(xs any) string { return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(xs)), ","), "[]") }
		curText := ""
		if slices.ContainsFunc(r.currencies, func(c string) bool { return c != r.currency }) {
			curText = strings.Join(r.currencies, ",")
		}
		text := strings.Join([]string{r.currency, join(r.events), join(r.uninstalls), join(r.paid), curText, fmt.Sprintf("gid://c|%d", id)}, "|")
		if cur, charge := arrays.parseFacts(text); cur != r.currency || charge != fmt.Sprintf("gid://c|%d", id) {
			t.Fatalf("facts_text %q: currency %q, charge %q", text, cur, charge)
		}
		var got summaryChargeRow
		got.derived = r.derived == 1
		got.lastA, got.lastB = lastBefore(arrays.events, uint64(endA)*eventKeyBase), lastBefore(arrays.events, uint64(endB)*eventKeyBase)
		got.unA, got.unB = lastBefore(arrays.uninstalls, endA), lastBefore(arrays.uninstalls, endB)
		got.first, got.gone = arrays.ends(r.ended)
		isCandidate := summaryCandidate(&got, r.annual == 1, r.activated, r.ended, endA, endB)
		paidFrom := recentFrom
		if r.annual == 1 {
			paidFrom = annualFrom
		}
		kept, keptCur := paymentsIn(slices.Clone(arrays.payments), 0, slices.Clone(arrays.currencies), paidFrom, endA)
		want := fmt.Sprint(lastA, lastB, first, unA, unB, gone, candidate == 1, paidAt, paidCur)
		have := fmt.Sprint(got.lastA, got.lastB, got.first, got.unA, got.unB, got.gone, isCandidate, join(kept), keptCur)
		if len(paidCur) == 0 && len(keptCur) == 0 {
			have = fmt.Sprint(got.lastA, got.lastB, got.first, got.unA, got.unB, got.gone, isCandidate, join(kept), paidCur)
		}
		if have != want {
			t.Fatalf("charge %d %+v:\n Go  %s\n SQL %s", id, r, have, want)
		}
		if isCandidate {
			candidates++
		}
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if candidates == 0 || candidates == len(rows) {
		t.Fatalf("%d of %d charges are candidates: the cases do not exercise the rule", candidates, len(rows))
	}
	t.Logf("%d charges, %d candidates", len(rows), candidates)
}
