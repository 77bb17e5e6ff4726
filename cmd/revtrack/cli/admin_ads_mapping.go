package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/uploader"
)

// adsMappingCommands: `admin ads mapping create|update|list|validation-only`.
func (a *app) adsMappingCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "mapping", Short: "Mappings of a tracking source's milestone to a conversion action"}

	var in uploader.MappingInput
	var validationOnly bool
	create := a.adsCommand("create SLUG", "Create a mapping (Validation only on unless --validation-only=false); past events are not uploaded",
		cobra.ExactArgs(1), func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			m := in
			m.ValidationOnly = &validationOnly
			return e.setup.CreateMapping(ctx, adminActor, e.ws.ID, m)
		})
	create.Flags().StringVar(&in.SourceID, "source", "", "tracking source ID")
	create.Flags().StringVar(&in.Milestone, "milestone", "", "install, trial_started, trial_converted, qualified or paid")
	create.Flags().StringVar(&in.ConversionActionID, "action-id", "", "numeric conversion action ID (not a resource name)")
	create.Flags().StringVar(&in.ConversionActionName, "action-name", "", "conversion action name (default: the discovered action's)")
	create.Flags().Var(optionalInt64{&in.FixedValueCents}, "fixed-value-cents", "fixed value in minor units, with --fixed-currency (default: the event's own value)")
	create.Flags().StringVar(&in.FixedCurrency, "fixed-currency", "", "three-letter currency of --fixed-value-cents")
	create.Flags().BoolVar(&in.ConsentConfirmed, "consent-confirmed", false, "confirm consent and the processing policy (required)")
	create.Flags().BoolVar(&validationOnly, "validation-only", true, "send events for validation only, applying no conversion")
	for _, f := range []string{"source", "milestone", "action-id"} {
		_ = create.MarkFlagRequired(f)
	}

	var actionID, actionName, currency string
	var value *int64
	var clearValue, consent, enabled bool
	update := &cobra.Command{Use: "update SLUG MAPPING_ID", Args: cobra.ExactArgs(2),
		Short: "Edit a mapping's action, fixed value or consent, or disable/enable it (only the flags given change)",
		RunE: func(c *cobra.Command, args []string) error {
			var u uploader.MappingUpdate
			changed := func(name string) bool { return c.Flags().Changed(name) }
			if changed("action-id") {
				u.ConversionActionID = &actionID
			}
			if changed("action-name") {
				u.ConversionActionName = &actionName
			}
			if changed("fixed-value-cents") {
				u.FixedValueCents = value
			}
			if changed("fixed-currency") {
				u.FixedCurrency = &currency
			}
			if changed("consent-confirmed") {
				u.ConsentConfirmed = &consent
			}
			if changed("enabled") {
				u.Enabled = &enabled
			}
			u.ClearFixedValue = clearValue
			return a.withAds(c, args[0], func(ctx context.Context, e adsEnv) error {
				m, err := e.setup.UpdateMapping(ctx, adminActor, e.ws.ID, args[1], u)
				if err != nil {
					return err
				}
				return a.printJSON(m)
			})
		}}
	update.Flags().StringVar(&actionID, "action-id", "", "numeric conversion action ID")
	update.Flags().StringVar(&actionName, "action-name", "", "conversion action name")
	update.Flags().Var(optionalInt64{&value}, "fixed-value-cents", "fixed value in minor units")
	update.Flags().StringVar(&currency, "fixed-currency", "", "three-letter currency of the fixed value")
	update.Flags().BoolVar(&clearValue, "clear-fixed-value", false, "remove the fixed value (the event's own value is sent)")
	update.Flags().BoolVar(&consent, "consent-confirmed", true, "consent and processing-policy confirmation")
	update.Flags().BoolVar(&enabled, "enabled", true, "enable (true) or disable (false) the mapping")

	list := a.adsCommand("list SLUG", "List the workspace's mappings, enabled or not", cobra.ExactArgs(1),
		func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			return nonNil(e.setup.ListMappings(ctx, e.ws.ID))
		})

	validation := a.adsCommand("validation-only SLUG MAPPING_ID on|off",
		"Turn Validation only on or off (off uploads new events live; validated rows are not replayed)", cobra.ExactArgs(3),
		func(ctx context.Context, e adsEnv, args []string) (any, error) {
			var on bool
			switch args[1] {
			case "on", "true":
				on = true
			case "off", "false":
			default:
				return nil, fmt.Errorf("%w: want on or off, got %q", controlplane.ErrInvalid, args[1])
			}
			return e.setup.SetValidationOnly(ctx, adminActor, e.ws.ID, args[0], on)
		})

	cmd.AddCommand(create, update, list, validation)
	return cmd
}

// optionalInt64 is a flag that sets a *int64 only when given.
type optionalInt64 struct{ p **int64 }

func (o optionalInt64) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatInt(**o.p, 10)
}

func (o optionalInt64) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %q", s)
	}
	*o.p = &n
	return nil
}

func (o optionalInt64) Type() string { return "int" }
