package platformsync

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/spf13/pflag"

	"github.com/revtrack/revtrack/internal/egress"
)

// Config tunes the sync: its schedule, its windows and limits, and its partner API requests.
type Config struct {
	// Interval is how often the scheduler syncs every connected workspace's selected apps (0: no
	// schedule; runs only on demand).
	Interval time.Duration
	// Concurrency is how many workspaces one scheduler pass syncs at once (a workspace's apps run
	// one after another: they share the partner API client's rate limit).
	Concurrency int
	// APIVersion is the partner API version asked for.
	APIVersion string
	// BaseURL is where the partner API is: operator configuration, never a workspace's (a
	// workspace-set address let one tenant make the server call internal services with its token).
	BaseURL string
	// Window, InitialWindow, Overlap, RowLimit and BackfillBudget: see Syncer.
	Window         time.Duration
	InitialWindow  time.Duration
	Overlap        time.Duration
	RowLimit       int
	BackfillBudget time.Duration
	// RequestsPerSecond paces one connection's requests once the API has answered 429 (0: never
	// paced; 429s are retried either way).
	RequestsPerSecond float64

	// Egress is the operator's policy for outbound connections (set from the process-wide flag).
	Egress egress.Policy

	// StartDelay is the wait before the scheduler's first pass, so that a process start does not
	// race an on-demand run started right after it (`make run`). Not a flag.
	StartDelay time.Duration
	// LockTTL is the lease of an app's sync lock; the holder renews it every third of it, so a
	// crashed holder blocks the app for at most this long. Not a flag.
	LockTTL time.Duration
	// ProgressInterval is how often a running run publishes its progress; a published snapshot
	// expires after 5 intervals without another, so a crashed run's progress is gone after at most
	// that long. Not a flag.
	ProgressInterval time.Duration
}

// DefaultConfig: hourly, 30-day windows, 90 days of recent history first, 3 days re-read for
// late records, the documented row limit, half an hour of backfill per run, and the platform's
// 4 requests per second.
func DefaultConfig() Config {
	return Config{
		Interval:          time.Hour,
		Concurrency:       2,
		APIVersion:        "2025-07",
		BaseURL:           DefaultBaseURL,
		Window:            30 * 24 * time.Hour,
		InitialWindow:     90 * 24 * time.Hour,
		Overlap:           3 * 24 * time.Hour,
		RowLimit:          DefaultRowLimit,
		BackfillBudget:    30 * time.Minute,
		RequestsPerSecond: 4,
		StartDelay:        time.Minute,
		LockTTL:           time.Minute,
		ProgressInterval:  2 * time.Second,
	}
}

// RegisterFlags binds the sync flags.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&c.Interval, "platform-sync-interval", c.Interval, "how often the process component syncs every connected workspace's selected apps from the partner API (0: only on demand)")
	fs.IntVar(&c.Concurrency, "platform-sync-concurrency", c.Concurrency, "workspaces one scheduled pass syncs at once (a workspace's apps run one after another)")
	fs.StringVar(&c.APIVersion, "platform-sync-api-version", c.APIVersion, "partner API version the sync asks for (YYYY-MM or unstable)")
	fs.StringVar(&c.BaseURL, "partner-api-base-url", c.BaseURL, "base URL of the platform's Partner API (operator setting; workspaces cannot change it)")
	fs.DurationVar(&c.Window, "platform-sync-window", c.Window, "width of one createdAt/occurredAt window of the partner API walks")
	fs.DurationVar(&c.InitialWindow, "platform-sync-initial-window", c.InitialWindow, "recent history an app's first sync loads before it fills older history backwards")
	fs.DurationVar(&c.Overlap, "platform-sync-overlap", c.Overlap, "how far before the forward cursor every run re-reads, for records the platform adds late")
	fs.IntVar(&c.RowLimit, "platform-sync-row-limit", c.RowLimit, "most transactions per app the backward walk loads (newest first) before it stops for good")
	fs.DurationVar(&c.BackfillBudget, "platform-sync-backfill-budget", c.BackfillBudget, "time one run may spend filling older history; the next run continues (0: no limit)")
	fs.Float64Var(&c.RequestsPerSecond, "platform-sync-requests-per-second", c.RequestsPerSecond, "pace of one partner connection's API requests once the API has throttled it with a 429 (0: never paced; 429s are retried either way)")
}

var apiVersionRe = regexp.MustCompile(`^([0-9]{4}-[0-9]{2}|unstable)$`)

// Validate checks the sync settings.
func (c Config) Validate() error {
	var errs []error
	if c.Interval < 0 || (c.Interval > 0 && c.Interval < time.Minute) {
		errs = append(errs, errors.New("platform-sync-interval: must be 0 or at least 1m"))
	}
	if c.Concurrency < 1 || c.Concurrency > 64 {
		errs = append(errs, errors.New("platform-sync-concurrency: must be between 1 and 64"))
	}
	if !apiVersionRe.MatchString(c.APIVersion) {
		errs = append(errs, fmt.Errorf("platform-sync-api-version: %q is not YYYY-MM or unstable", c.APIVersion))
	}
	if err := validBaseURL(c.BaseURL, c.Egress); err != nil {
		errs = append(errs, fmt.Errorf("partner-api-base-url: %w", err))
	}
	if c.Window < time.Hour {
		errs = append(errs, errors.New("platform-sync-window: must be at least 1h"))
	}
	if c.InitialWindow < 24*time.Hour {
		errs = append(errs, errors.New("platform-sync-initial-window: must be at least 24h"))
	}
	if c.Overlap < 0 {
		errs = append(errs, errors.New("platform-sync-overlap: must not be negative"))
	}
	if c.RowLimit < 1 {
		errs = append(errs, errors.New("platform-sync-row-limit: must be at least 1"))
	}
	if c.BackfillBudget < 0 {
		errs = append(errs, errors.New("platform-sync-backfill-budget: must not be negative"))
	}
	if c.RequestsPerSecond < 0 {
		errs = append(errs, errors.New("platform-sync-requests-per-second: must not be negative"))
	}
	if c.StartDelay < 0 || c.LockTTL < time.Second || c.ProgressInterval < 0 {
		errs = append(errs, errors.New("platform sync start delay and progress interval must not be negative and the lock TTL at least 1s"))
	}
	return errors.Join(errs...)
}

// validBaseURL accepts an http(s) URL without credentials, query or fragment, whose host the egress
// policy allows (plain http only where private networks are allowed: the local fake).
func validBaseURL(raw string, p egress.Policy) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an http(s) URL without credentials, query or fragment", raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowPrivateNetworks:
	default:
		return fmt.Errorf("%q: must be https (http only with --egress-allow-private-networks)", raw)
	}
	return p.CheckHost(u.Hostname())
}
