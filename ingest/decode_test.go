package ingest

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func body(fields map[string]any) []byte {
	base := map[string]any{"teamSlug": "acme", "publicKey": "tracker_pk_x", "eventId": "evt-1", "acquisitionId": "acq-1",
		"name": "install", "customerRef": "shop.myshopify.com", "occurredAt": "2026-11-21T11:00:00Z"}
	for k, v := range fields {
		if v == nil {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	b, _ := json.Marshal(base)
	return b
}

func TestDecodeServerEvent(t *testing.T) {
	ok := []map[string]any{
		{},
		{"name": "paid", "amountCents": 1999, "currency": "USD"},
		{"name": "refunded", "amountCents": 500, "currency": "eur"},
		{"name": "identified", "acquisitionId": nil},
		{"occurredAt": "2026-11-21T11:00:00.123+02:00"},
		{"name": "install", "amountCents": nil, "currency": nil},
	}
	for _, f := range ok {
		if _, ev, err := decodeServerEvent(body(f), now, time.Hour); err != nil {
			t.Errorf("%v: %v", f, err)
		} else if ev.Name == "" || ev.OccurredAt.Location() != time.UTC {
			t.Errorf("%v: decoded %+v", f, ev)
		}
	}
	bad := map[string]map[string]any{
		"eventId":              {"eventId": ""},
		"name":                 {"name": "purchase"},
		"amountCents required": {"name": "paid"},
		"currency required":    {"name": "paid", "amountCents": 100},
		"amount positive":      {"name": "paid", "amountCents": 0, "currency": "USD"},
		"amount integer":       {"name": "paid", "amountCents": 10.5, "currency": "USD"},
		"amount not a string":  {"name": "paid", "amountCents": "100", "currency": "USD"},
		"currency letters":     {"name": "paid", "amountCents": 100, "currency": "US"},
		"together":             {"name": "install", "amountCents": 100},
		"occurredAt format":    {"occurredAt": "21/11/2026"},
		"occurredAt zone":      {"occurredAt": "2026-11-21T11:00:00"},
		"occurredAt future":    {"occurredAt": "2026-11-22T12:00:00Z"},
		"customerRef domain":   {"customerRef": "not a domain"},
		"teamSlug":             {"teamSlug": nil},
		"publicKey":            {"publicKey": nil},
	}
	for name, f := range bad {
		_, _, err := decodeServerEvent(body(f), now, time.Hour)
		ae := toAPIError(err)
		if err == nil || ae.Status() != 400 || ae.Code != "invalid_parameter" {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, raw := range []string{"", "[]", "{", `{"a":1} {"b":2}`, "null"} {
		_, _, err := decodeServerEvent([]byte(raw), now, time.Hour)
		if ae := toAPIError(err); err == nil || ae.Status() != 400 {
			t.Errorf("%q: %v", raw, err)
		}
	}
}

func FuzzDecodeServerEvent(f *testing.F) {
	f.Add(body(nil))
	f.Add(body(map[string]any{"name": "paid", "amountCents": 1, "currency": "USD"}))
	f.Add([]byte(`{"amountCents":1e400}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, ev, err := decodeServerEvent(b, now, time.Hour)
		if err != nil {
			if toAPIError(err).Status() != 400 {
				t.Fatalf("decode error is not a 400: %v", err)
			}
			return
		}
		if ev.Validate() != nil && ev.SourceID != "" {
			t.Fatal("accepted event breaks the topic contract")
		}
		if commissionable(ev.Name) && (ev.AmountCents == nil || *ev.AmountCents <= 0 || ev.Currency == "") {
			t.Fatalf("commissionable event without money: %+v", ev)
		}
	})
}

func TestDecodeBrowserEvent(t *testing.T) {
	good := `{"eventId":"e1","name":"page_view","occurredAt":"2026-11-21T11:59:00.5Z","acquisitionId":"a1",
"url":"https://app.example/install?hmac=abc&utm_source=x&shop=s.myshopify.com&code=1","firstTouch":{"landingUrl":"https://app.example/?id_token=t&gclid=g","gclid":"g"},
"properties":{"plan":"pro"}}`
	ev, err := decodeBrowserEvent(json.RawMessage(good), now, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev.URL != "https://app.example/install?utm_source=x" || ev.FirstTouch.LandingURL != "https://app.example/?gclid=g" {
		t.Fatalf("auth parameters kept: %q %q", ev.URL, ev.FirstTouch.LandingURL)
	}
	future, err := decodeBrowserEvent(json.RawMessage(`{"eventId":"e2","name":"page_view","occurredAt":"2027-01-01T00:00:00Z","acquisitionId":"a1"}`), now, time.Hour, nil)
	if err != nil || !future.OccurredAt.Equal(now) {
		t.Fatalf("a browser clock far ahead must be clamped to the receipt time: %v %v", future.OccurredAt, err)
	}
	for _, raw := range []string{`[]`, `{"eventId":"e","name":"bad name","occurredAt":"2026-11-21T11:00:00Z","acquisitionId":"a"}`,
		`{"eventId":"e","name":"x","occurredAt":"2026-11-21T11:00:00Z","acquisitionId":""}`,
		`{"eventId":"e","name":"x","occurredAt":"yesterday","acquisitionId":"a"}`,
		`{"eventId":"e","name":"x","occurredAt":"2026-11-21T11:00:00Z","acquisitionId":"a","properties":[1]}`,
		`{"eventId":"e","name":"platform_context","occurredAt":"2026-11-21T11:00:00Z","acquisitionId":"a","platform":{"platformShop":"s","platformIdentitySource":"token"}}`} {
		if _, err := decodeBrowserEvent(json.RawMessage(raw), now, time.Hour, nil); err == nil {
			t.Errorf("accepted %s", raw)
		}
	}
}

func FuzzDecodeBrowserEvent(f *testing.F) {
	f.Add([]byte(`{"eventId":"e1","name":"page_view","occurredAt":"2026-11-21T11:59:00Z","acquisitionId":"a1","url":"https://a.example/?hmac=1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := decodeBrowserEvent(b, now, time.Hour, nil)
		if err != nil {
			return
		}
		if len(ev.URL) > maxURLLen || len(ev.Title) > maxTextLen {
			t.Fatal("unbounded text accepted")
		}
		for _, p := range []string{"hmac=", "id_token=", "signature="} {
			if strings.Contains(ev.URL, "?"+p) || strings.Contains(ev.URL, "&"+p) {
				t.Fatalf("auth parameter kept in %q", ev.URL)
			}
		}
	})
}

func TestStripAuthParams(t *testing.T) {
	cases := map[string]string{
		"https://a.example/p?hmac=1&x=2&HOST=h&id_token=t#frag":        "https://a.example/p?x=2#frag",
		"https://a.example/?utm_source=ads&state=s&code=c&timestamp=1": "https://a.example/?utm_source=ads",
		"https://a.example/#/route?session=abc&tab=2":                  "https://a.example/#/route?tab=2",
		"https://a.example/#access_token=abc":                          "https://a.example/",
		"https://a.example/plain":                                      "https://a.example/plain",
		"":                                                             "",
		"%zz":                                                          "",
		// User info, with and without a password.
		"https://user:pa55@a.example/p?x=1": "https://a.example/p?x=1",
		"https://user@a.example/":           "https://a.example/",
		// The broader list: exact names and names containing a secret word, in any case and encoding.
		"https://a.example/reset?token=t&Refresh_Token=r&password=p&API_KEY=k&client_secret=s&tab=2":           "https://a.example/reset?tab=2",
		"https://a.example/?key=k&keyword=shoes&apikey=1&api-key=2&passwd=3&pwd=4&pass=5&auth=6&sid=7":         "https://a.example/?keyword=shoes",
		"https://s3.example/o?X-Amz-Signature=a&X-Amz-Credential=b&X-Amz-Security-Token=c&X-Amz-Expires=60":    "https://s3.example/o?X-Amz-Expires=60",
		"https://a.example/cb?sig=1&nonce=2&session_state=3&oauth_verifier=4&JSESSIONID=5&%74oken=6&author=jo": "https://a.example/cb?author=jo",
		"https://a.example/?csrf_token=1&token%zz=2&utm_campaign=x":                                            "https://a.example/?utm_campaign=x",
		"https://a.example/#/app?authorization=Bearer%20x&embedded=1&locale=en":                                "https://a.example/#/app?embedded=1&locale=en",
		// Attribution is kept as sent.
		"https://a.example/?tracker_ref=p-7&utm_source=g&utm_medium=cpc&utm_campaign=c&utm_term=t&utm_content=x&gclid=G&gbraid=B&wbraid=W": "https://a.example/?tracker_ref=p-7&utm_source=g&utm_medium=cpc&utm_campaign=c&utm_term=t&utm_content=x&gclid=G&gbraid=B&wbraid=W",
	}
	for in, want := range cases {
		if got := StripAuthParams(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func FuzzStripAuthParams(f *testing.F) {
	f.Add("https://a.example/?hmac=1&b=2")
	f.Add("https://a.example/#x?code=1")
	f.Add("https://user:secret@a.example/?Access_Token=t&utm_source=x")
	f.Add("//u:p@host/?api%2Dkey=1#/r?password=2")
	f.Add("https://a.example/?%zz=1&token=2")
	f.Fuzz(func(t *testing.T, s string) {
		out := StripAuthParams(s)
		if again := StripAuthParams(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if out == "" {
			return
		}
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("output does not parse: %q: %v", out, err)
		}
		if u.User != nil {
			t.Fatalf("user info kept: %q -> %q", s, out)
		}
		for name := range u.Query() {
			if secretParam.MatchString(strings.ToLower(name)) {
				t.Fatalf("secret parameter %q kept: %q -> %q", name, s, out)
			}
		}
	})
}

// FuzzCollectBody feeds whole browser batches through the same decoding the collect handler does.
func FuzzCollectBody(f *testing.F) {
	f.Add([]byte(`{"key":"tracker_pk_x","batch":[{"eventId":"e1","name":"page_view","occurredAt":"2026-11-21T11:59:00Z","acquisitionId":"a1"}]}`))
	f.Add([]byte(`{"key":1,"batch":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var req schemas.CollectRequest
		if json.Unmarshal(b, &req) != nil {
			return
		}
		for _, raw := range req.Batch {
			ev, err := decodeBrowserEvent(raw, now, time.Hour, nil)
			if err == nil && (ev.EventID == "" || ev.AcquisitionID == "" || ev.OccurredAt.IsZero()) {
				t.Fatalf("accepted an event without identity: %+v", ev)
			}
		}
	})
}
