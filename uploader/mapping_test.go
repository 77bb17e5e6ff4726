package uploader_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader"
)

func setupPtr[T any](v T) *T { return &v }

func TestCreateMappingRules(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	e.ready()

	// A source of another app: selected when it was created, no longer selected now.
	store := e.tenant.Store
	if err := store.PutApp(e.ctx, "test", controlplane.App{ID: "app-2", Name: "Other"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetSelectedApps(e.ctx, "test", "acme", []string{"app-1", "app-2"}); err != nil {
		t.Fatal(err)
	}
	unselected, _, err := store.CreateSource(e.ctx, "test", "acme", "app-2", "other", []string{"https://other.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetSelectedApps(e.ctx, "test", "acme", []string{"app-1"}); err != nil {
		t.Fatal(err)
	}

	valid := func() uploader.MappingInput {
		return uploader.MappingInput{SourceID: e.tenant.Source.ID, Milestone: "paid", ConversionActionID: googlefake.DefaultActionID,
			ConversionActionName: "Paid", ConsentConfirmed: true}
	}
	for _, c := range []struct {
		name string
		edit func(*uploader.MappingInput)
		want string
	}{
		{"resource name", func(m *uploader.MappingInput) {
			m.ConversionActionID = "customers/1234567890/conversionActions/7723667020"
		}, "resource name: give only the numeric ID (7723667020)"},
		{"letters", func(m *uploader.MappingInput) { m.ConversionActionID = "abc" }, "numeric ID"},
		{"21 digits", func(m *uploader.MappingInput) { m.ConversionActionID = strings.Repeat("1", 21) }, "numeric ID"},
		{"empty action", func(m *uploader.MappingInput) { m.ConversionActionID = "" }, "numeric ID"},
		{"unknown action without name", func(m *uploader.MappingInput) { m.ConversionActionID, m.ConversionActionName = "42", "" }, "name is required"},
		{"value without currency", func(m *uploader.MappingInput) { m.FixedValueCents = setupPtr(int64(100)) }, "give both"},
		{"currency without value", func(m *uploader.MappingInput) { m.FixedCurrency = "USD" }, "give both"},
		{"zero value", func(m *uploader.MappingInput) { m.FixedValueCents, m.FixedCurrency = setupPtr(int64(0)), "USD" }, "positive integer"},
		{"negative value", func(m *uploader.MappingInput) { m.FixedValueCents, m.FixedCurrency = setupPtr(int64(-5)), "USD" }, "positive integer"},
		{"two-letter currency", func(m *uploader.MappingInput) { m.FixedValueCents, m.FixedCurrency = setupPtr(int64(5)), "US" }, "three-letter"},
		{"no consent", func(m *uploader.MappingInput) { m.ConsentConfirmed = false }, "consent"},
		{"refunded", func(m *uploader.MappingInput) { m.Milestone = "refunded" }, "milestone"},
		{"identified", func(m *uploader.MappingInput) { m.Milestone = "identified" }, "milestone"},
		{"no source", func(m *uploader.MappingInput) { m.SourceID = "" }, "tracking source is required"},
		{"unknown source", func(m *uploader.MappingInput) { m.SourceID = "nope" }, "not a source of this workspace"},
		{"unselected app", func(m *uploader.MappingInput) { m.SourceID = unselected.ID }, "not one of the workspace's selected apps"},
		{"control characters", func(m *uploader.MappingInput) { m.ConversionActionName = "a\nb" }, "control characters"},
	} {
		in := valid()
		c.edit(&in)
		if _, err := e.setup.CreateMapping(e.ctx, setupActor, e.ws, in); !errors.Is(err, uploader.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if ms, _ := e.setup.ListMappings(e.ctx, e.ws); len(ms) != 0 {
		t.Fatalf("invalid mappings stored: %+v", ms)
	}

	before := time.Now().UTC().Truncate(time.Second)
	in := valid()
	in.Milestone, in.FixedValueCents, in.FixedCurrency = "trial started", setupPtr(int64(4900)), "eur"
	m, err := e.setup.CreateMapping(e.ctx, setupActor, e.ws, in)
	if err != nil {
		t.Fatal(err)
	}
	if m.Milestone != "trial_started" || m.FixedCurrency != "EUR" || *m.FixedValueCents != 4900 || !m.ValidationOnly || !m.Enabled ||
		!m.ConsentConfirmed || m.ConnectionID != e.connection().ConnectionID || m.CreatedAt.Before(before) {
		t.Fatalf("created %+v", m)
	}
	if got, err := e.setup.GetMapping(e.ctx, e.ws, m.MappingID); err != nil || got.FixedCurrency != "EUR" || !got.CreatedAt.Equal(m.CreatedAt) {
		t.Fatalf("stored %+v %v", got, err)
	}
	// One enabled mapping per source, milestone and action: a second would upload each event twice.
	in.FixedValueCents, in.FixedCurrency = nil, ""
	if _, err := e.setup.CreateMapping(e.ctx, setupActor, e.ws, in); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("duplicate: %v", err)
	}
	in.ConversionActionID, in.ConversionActionName, in.ValidationOnly = googlefake.DefaultActionID2, "", setupPtr(false)
	live, err := e.setup.CreateMapping(e.ctx, setupActor, e.ws, in)
	if err != nil || live.ValidationOnly || live.ConversionActionName != "Purchase (offline)" {
		t.Fatalf("second action: %+v %v", live, err)
	}
	if _, err := e.setup.GetMapping(e.ctx, e.ws, "nope"); !errors.Is(err, uploader.ErrNotFound) {
		t.Fatalf("unknown mapping: %v", err)
	}
}

func TestUpdateMappingAndValidationMode(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	e.ready()
	m := e.mapping("qualified", googlefake.DefaultActionID)
	if m.ConversionActionName != "Qualified lead (offline)" {
		t.Fatalf("mapping %+v", m)
	}

	// Edit the action (its name follows from the discovered list) and the fixed value.
	got, err := e.setup.UpdateMapping(e.ctx, setupActor, e.ws, m.MappingID, uploader.MappingUpdate{
		ConversionActionID: setupPtr(googlefake.DefaultActionID2), FixedValueCents: setupPtr(int64(1000)), FixedCurrency: setupPtr("usd")})
	if err != nil || got.ConversionActionName != "Purchase (offline)" || *got.FixedValueCents != 1000 || got.FixedCurrency != "USD" ||
		got.Milestone != "qualified" || !got.CreatedAt.Equal(m.CreatedAt) {
		t.Fatalf("edit: %+v %v", got, err)
	}
	for _, c := range []struct {
		name string
		u    uploader.MappingUpdate
	}{
		{"consent withdrawn", uploader.MappingUpdate{ConsentConfirmed: setupPtr(false)}},
		{"currency only", uploader.MappingUpdate{ClearFixedValue: true, FixedCurrency: setupPtr("USD")}},
		{"resource name", uploader.MappingUpdate{ConversionActionID: setupPtr("customers/1/conversionActions/2")}},
	} {
		if _, err := e.setup.UpdateMapping(e.ctx, setupActor, e.ws, m.MappingID, c.u); !errors.Is(err, uploader.ErrInvalid) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	got, err = e.setup.UpdateMapping(e.ctx, setupActor, e.ws, m.MappingID, uploader.MappingUpdate{ClearFixedValue: true})
	if err != nil || got.FixedValueCents != nil || got.FixedCurrency != "" {
		t.Fatalf("clear value: %+v %v", got, err)
	}
	if got, _ = e.setup.GetMapping(e.ctx, e.ws, m.MappingID); got.FixedValueCents != nil {
		t.Fatalf("cleared value came back: %+v", got)
	}

	// Validation only off and on again; each change audited.
	if got, err = e.setup.SetValidationOnly(e.ctx, setupActor, e.ws, m.MappingID, false); err != nil || got.ValidationOnly {
		t.Fatalf("validation off: %+v %v", got, err)
	}
	if got, err = e.setup.SetValidationOnly(e.ctx, setupActor, e.ws, m.MappingID, true); err != nil || !got.ValidationOnly {
		t.Fatalf("validation on: %+v %v", got, err)
	}
	if _, err := e.setup.SetValidationOnly(e.ctx, setupActor, e.ws, "nope", true); !errors.Is(err, uploader.ErrNotFound) {
		t.Fatalf("unknown mapping: %v", err)
	}

	// Disabled by the user, then re-enabled.
	got, err = e.setup.UpdateMapping(e.ctx, setupActor, e.ws, m.MappingID, uploader.MappingUpdate{Enabled: setupPtr(false)})
	if err != nil || got.Enabled || got.DisabledReason != "disabled by "+setupActor {
		t.Fatalf("disable: %+v %v", got, err)
	}
	// While it is disabled another mapping may take its place; re-enabling it would then duplicate.
	dup := e.mapping("qualified", googlefake.DefaultActionID2)
	if _, err := e.setup.UpdateMapping(e.ctx, setupActor, e.ws, m.MappingID, uploader.MappingUpdate{Enabled: setupPtr(true)}); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("re-enable duplicate: %v", err)
	}
	if _, err := e.setup.UpdateMapping(e.ctx, setupActor, e.ws, dup.MappingID, uploader.MappingUpdate{Enabled: setupPtr(false)}); err != nil {
		t.Fatal(err)
	}
	if got, err = e.setup.UpdateMapping(e.ctx, setupActor, e.ws, m.MappingID, uploader.MappingUpdate{Enabled: setupPtr(true)}); err != nil || !got.Enabled {
		t.Fatalf("re-enable: %+v %v", got, err)
	}

	want := []string{"ads_mapping.create", "ads_mapping.update", "ads_mapping.update", "ads_mapping.validation_only",
		"ads_mapping.validation_only", "ads_mapping.disable", "ads_mapping.create", "ads_mapping.disable", "ads_mapping.enable"}
	var got2 []string
	for _, a := range e.auditActions() {
		if strings.HasPrefix(a, "ads_mapping.") {
			got2 = append(got2, a)
		}
	}
	if !slices.Equal(got2, want) {
		t.Errorf("audit\n got %v\nwant %v", got2, want)
	}
	log, err := e.tenant.Store.AuditLog(e.ctx, e.ws, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range log {
		if a.Action == "ads_mapping.validation_only" && a.TargetID == m.MappingID && a.Details["validationOnly"] == "true" &&
			a.Details["validationOnlyBefore"] == "false" && a.Actor == setupActor {
			return
		}
	}
	t.Error("no audit entry of turning Validation only back on")
}
