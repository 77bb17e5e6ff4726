// Package config is revtrack's typed configuration: every setting is a flag with a local default,
// overridable by a REVTRACK_* environment variable, and validated before anything starts.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/ingest"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/egress"
	"github.com/revtrack/revtrack/internal/httpserver"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/obs"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/processors"
	"github.com/revtrack/revtrack/processors/analystmrr"
	"github.com/revtrack/revtrack/query/budget"
	"github.com/revtrack/revtrack/uploader"
)

// HTTPConfig is the HTTP edge of a component.
type HTTPConfig struct {
	Addr string
	// BaseURL is the public URL clients use; tracker.js and docs derive their URLs from it.
	BaseURL           string
	ReadHeaderTimeout time.Duration
	ShutdownTimeout   time.Duration
	// ReadTimeout, WriteTimeout, IdleTimeout and MaxBodyBytes bound every request (httpserver.Config
	// states each contract); MCPWriteTimeout replaces WriteTimeout for /api/mcp, whose tool calls
	// may run several REST requests in turn.
	ReadTimeout     time.Duration
	WriteTimeout    time.Duration
	MCPWriteTimeout time.Duration
	IdleTimeout     time.Duration
	MaxBodyBytes    int64
}

// Config is the whole process configuration.
type Config struct {
	Log        obs.LogConfig
	HTTP       HTTPConfig
	Kafka      kafkax.Config
	ClickHouse clickhousex.Config
	Redis      redisx.Config
	Process    processors.Config
	// AnalystMRR schedules the analyst views of daily MRR and movements (process component).
	AnalystMRR analystmrr.Config
	Ingest     ingest.Config
	// QueryLimits are the reporting edge's cost limits (REST /api/v1 and MCP; query/budget).
	QueryLimits budget.Config
	// PlatformSync is the partner API sync: its schedule (process component) and its walks.
	PlatformSync platformsync.Config
	// Uploader is the ad-conversion upload: the advertising connection's OAuth client and where
	// Google is (admin API, query component), and the queue, dispatcher and diagnostics poller
	// (upload component).
	Uploader uploader.Config
	// AutoMigrate applies migrations and creates topics at start-up.
	AutoMigrate bool
	// EncryptionKeys seals secrets at rest (partner tokens, advertising refresh tokens):
	// id:base64key,... (controlplane.Keyring).
	EncryptionKeys string
	// AllowDevelopmentKey lets a server start while sealing with the published development key:
	// local use only (`make run` and the tests set it). Without it a server refuses to start.
	AllowDevelopmentKey bool
	// Egress is the policy of every call to a third-party platform (partner API, Google).
	Egress egress.Policy
	// Sessions are console sign-in's sessions, throttle and one-time links (query component).
	Sessions authn.SessionConfig
}

// Default returns the configuration for the local stack.
func Default() Config {
	hd := httpserver.DefaultConfig()
	return Config{
		Log: obs.DefaultLogConfig(),
		HTTP: HTTPConfig{Addr: "127.0.0.1:8080", ReadHeaderTimeout: hd.ReadHeaderTimeout,
			ShutdownTimeout: hd.ShutdownTimeout, ReadTimeout: hd.ReadTimeout, WriteTimeout: hd.WriteTimeout,
			MCPWriteTimeout: 2 * hd.WriteTimeout, IdleTimeout: hd.IdleTimeout, MaxBodyBytes: hd.MaxBodyBytes},
		Kafka:          kafkax.DefaultConfig(),
		ClickHouse:     clickhousex.DefaultConfig(),
		Redis:          redisx.DefaultConfig(),
		Process:        processors.DefaultConfig(),
		AnalystMRR:     analystmrr.DefaultConfig(),
		Ingest:         ingest.DefaultConfig(),
		QueryLimits:    budget.DefaultConfig(),
		PlatformSync:   platformsync.DefaultConfig(),
		Uploader:       uploader.DefaultConfig(),
		AutoMigrate:    true,
		EncryptionKeys: controlplane.DevelopmentEncryptionKeys,
		Sessions:       authn.DefaultSessionConfig(),
	}
}

// RegisterFlags binds every setting.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	c.Log.RegisterFlags(fs)
	fs.StringVar(&c.HTTP.Addr, "http-addr", c.HTTP.Addr, "listen address of the component's HTTP server (API, /healthz, /readyz, /metrics)")
	fs.StringVar(&c.HTTP.BaseURL, "base-url", c.HTTP.BaseURL, "public base URL of the service (default http://<http-addr>)")
	fs.DurationVar(&c.HTTP.ReadHeaderTimeout, "http-read-header-timeout", c.HTTP.ReadHeaderTimeout, "time allowed to read request headers")
	fs.DurationVar(&c.HTTP.ShutdownTimeout, "http-shutdown-timeout", c.HTTP.ShutdownTimeout, "time allowed for in-flight requests on shutdown")
	fs.DurationVar(&c.HTTP.ReadTimeout, "http-read-timeout", c.HTTP.ReadTimeout, "time allowed to read a whole request, body included (a slower client is cut off)")
	fs.DurationVar(&c.HTTP.WriteTimeout, "http-write-timeout", c.HTTP.WriteTimeout, "time allowed to answer a request, from the end of its headers to the last byte of the answer")
	fs.DurationVar(&c.HTTP.MCPWriteTimeout, "http-mcp-write-timeout", c.HTTP.MCPWriteTimeout, "http-write-timeout of /api/mcp, whose tool calls may run several REST requests in turn")
	fs.DurationVar(&c.HTTP.IdleTimeout, "http-idle-timeout", c.HTTP.IdleTimeout, "time an idle keep-alive connection is kept open (keep it above the proxy's own)")
	fs.Int64Var(&c.HTTP.MaxBodyBytes, "http-max-body-bytes", c.HTTP.MaxBodyBytes, "largest request body on any route (then 413); the ingest routes keep their own smaller limits")
	c.Kafka.RegisterFlags(fs)
	c.ClickHouse.RegisterFlags(fs)
	c.Redis.RegisterFlags(fs)
	c.Process.RegisterFlags(fs)
	c.AnalystMRR.RegisterFlags(fs)
	c.Ingest.RegisterFlags(fs)
	c.QueryLimits.RegisterFlags(fs)
	c.PlatformSync.RegisterFlags(fs)
	c.Uploader.RegisterFlags(fs)
	fs.BoolVar(&c.AutoMigrate, "auto-migrate", c.AutoMigrate, "apply ClickHouse migrations and create Kafka topics at start-up")
	fs.StringVar(&c.EncryptionKeys, "encryption-keys", c.EncryptionKeys, "AES-256-GCM keys sealing secrets at rest (partner tokens, advertising refresh tokens), "+
		"comma-separated id:base64key (32-byte keys); the first seals, all open, so rotate by adding a new key first. "+
		"The default "+controlplane.DevelopmentKeyID+" key is published and for local use only: production must set its own")
	fs.BoolVar(&c.AllowDevelopmentKey, "allow-development-encryption-key", c.AllowDevelopmentKey, "let a server start while sealing secrets with the published "+
		controlplane.DevelopmentKeyID+" key (local development and tests only; servers refuse it otherwise)")
	c.Egress.RegisterFlags(fs)
	c.Sessions.RegisterFlags(fs)
}

// EnvName is the environment variable that sets a flag: REVTRACK_ plus the upper-cased flag name.
func EnvName(flag string) string {
	return "REVTRACK_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// ApplyEnv sets every flag not given on the command line from its environment variable.
func ApplyEnv(fs *pflag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		if v, ok := os.LookupEnv(EnvName(f.Name)); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", EnvName(f.Name), err))
			}
		}
	})
	return errors.Join(errs...)
}

// Validate checks everything and fills derived values.
func (c *Config) Validate() error {
	// One egress policy for every platform client; the parts validate their addresses against it.
	c.PlatformSync.Egress = c.Egress
	c.Uploader.Egress = c.Egress
	errs := []error{c.Log.Validate(), c.Kafka.Validate(), c.ClickHouse.Validate(), c.Redis.Validate(), c.Process.Validate(), c.AnalystMRR.Validate(), c.Ingest.Validate(),
		c.QueryLimits.Validate(), c.PlatformSync.Validate(), c.Uploader.Validate(), c.Sessions.Validate()}
	if _, _, err := net.SplitHostPort(c.HTTP.Addr); err != nil {
		errs = append(errs, fmt.Errorf("http-addr: %w", err))
	}
	if c.HTTP.BaseURL == "" {
		c.HTTP.BaseURL = "http://" + c.HTTP.Addr
	}
	if u, err := url.Parse(c.HTTP.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base-url: %q is not an http(s) URL", c.HTTP.BaseURL))
	}
	c.HTTP.BaseURL = strings.TrimSuffix(c.HTTP.BaseURL, "/")
	// Google sends the browser back to the callback under the public base URL unless another
	// redirect URI is registered for the OAuth client.
	c.Uploader.OAuthRedirectURL = c.Uploader.RedirectURL(c.HTTP.BaseURL)
	if _, err := controlplane.ParseKeyring(c.EncryptionKeys); err != nil {
		errs = append(errs, fmt.Errorf("encryption-keys: %w", err))
	}
	errs = append(errs, c.HTTP.Server(nil).Validate())
	if c.HTTP.MCPWriteTimeout <= 0 {
		errs = append(errs, errors.New("http-mcp-write-timeout must be positive"))
	}
	if c.Ingest.MaxBatchBytes > c.HTTP.MaxBodyBytes || c.Ingest.MaxServerEventBytes > c.HTTP.MaxBodyBytes {
		errs = append(errs, errors.New("http-max-body-bytes must be at least the ingest body limits, or it refuses ingest bodies first"))
	}
	return errors.Join(errs...)
}

// Markdown renders the configuration table of README.md from the flags themselves, so the
// documentation cannot drift from the code (a test compares them).
func Markdown(fs *pflag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| Flag | Environment variable | Default | Meaning |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		def := f.DefValue
		if f.Value.Type() == "stringSlice" {
			def = strings.Trim(def, "[]")
		}
		if def == "" {
			def = "(empty)"
		}
		fmt.Fprintf(&b, "| `--%s` | `%s` | `%s` | %s |\n", f.Name, EnvName(f.Name), def, f.Usage)
	})
	return b.String()
}

// Server is the HTTP server's configuration; longWrites are the paths answered under
// MCPWriteTimeout (the MCP endpoint, where the query component serves it).
func (h HTTPConfig) Server(longWrites []string) httpserver.Config {
	cfg := httpserver.Config{ReadHeaderTimeout: h.ReadHeaderTimeout, ReadTimeout: h.ReadTimeout, WriteTimeout: h.WriteTimeout,
		IdleTimeout: h.IdleTimeout, ShutdownTimeout: h.ShutdownTimeout, MaxBodyBytes: h.MaxBodyBytes,
		LongWrites: map[string]time.Duration{}}
	for _, p := range longWrites {
		cfg.LongWrites[p] = h.MCPWriteTimeout
	}
	return cfg
}

// ErrDevelopmentKey is returned when a server would seal secrets with the published key.
var ErrDevelopmentKey = errors.New("refusing to start: secrets would be sealed with the published development key " +
	controlplane.DevelopmentKeyID + ", which anyone can read in the source and use to open them; set --encryption-keys " +
	"(REVTRACK_ENCRYPTION_KEYS) to a key of your own, or pass --allow-development-encryption-key for local development only")

// CheckServerKeys refuses the published development key as the sealing key of a server unless the
// operator allowed it explicitly.
func (c Config) CheckServerKeys() error {
	k, err := controlplane.ParseKeyring(c.EncryptionKeys)
	if err != nil {
		return fmt.Errorf("encryption-keys: %w", err)
	}
	if k.Development() && !c.AllowDevelopmentKey {
		return ErrDevelopmentKey
	}
	return nil
}
