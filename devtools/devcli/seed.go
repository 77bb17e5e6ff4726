package devcli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas/bootstrap"
)

const (
	demoSlug = "demo"
	// demoPageAddr serves the demo page (`revtrack-dev demo-page`); its origin is the demo source's
	// allowed origin.
	demoPageAddr   = "127.0.0.1:8090"
	demoPageOrigin = "http://" + demoPageAddr
	demoSourceName = "Upsell Wizard install page"
	// adminActor names the operator in the audit log, as revtrack's own admin commands do.
	adminActor = "cli:admin"
)

// demoOwnerEmail signs in to the console as the demo workspace's owner.
const demoOwnerEmail = "owner@demo.example"

// demoCredentials is what `make run` prints so a developer can try tracking and the console at
// once.
type demoCredentials struct {
	APIKey, PublicKey, PrivateKey string
	// OwnerPassword is the demo owner's console password, new on every run (shown only then).
	OwnerPassword string
}

var demoApps = []controlplane.App{
	{ID: "demo-upsell", PlatformAppID: "gid://partners/App/1001", Name: "Upsell Wizard"},
	{ID: "demo-reviews", PlatformAppID: "gid://partners/App/1002", Name: "Review Stars"},
}

// seedDemoCommand seeds the demo workspace used by `make run` and prints fresh keys for it, in the
// form deploy/local/run reads.
func (a *app) seedDemoCommand() *cobra.Command {
	return &cobra.Command{Use: "seed-demo", Short: "Create the demo workspace (idempotent) and print a new API key for it", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			keys, err := controlplane.ParseKeyring(a.cfg.EncryptionKeys)
			if err != nil {
				return fmt.Errorf("encryption-keys: %w", err)
			}
			ctx, cancel := context.WithTimeout(c.Context(), 2*time.Minute)
			defer cancel()
			s, closeStore, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer closeStore()
			creds, err := seedDemo(ctx, s, keys)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "team=%s api_key=%s tracker_pk=%s tracker_sk=%s demo_page=%s/ email=%s password=%s\n",
				demoSlug, creds.APIKey, creds.PublicKey, creds.PrivateKey, demoPageOrigin, demoOwnerEmail, creds.OwnerPassword)
			return nil
		}}
}

// openStore opens the control-plane store the way revtrack's admin commands do: Redis, the
// migrations when auto-migrate is on, then ClickHouse; no Kafka.
func (a *app) openStore(ctx context.Context) (*controlplane.Store, func(), error) {
	rc, err := redisx.Open(ctx, a.cfg.Redis)
	if err != nil {
		return nil, nil, err
	}
	if a.cfg.AutoMigrate {
		if _, err := bootstrap.Migrate(ctx, a.cfg.ClickHouse, rc, a.cfg.Redis.KeyPrefix, a.log); err != nil {
			rc.Close()
			return nil, nil, fmt.Errorf("migrate: %w", err)
		}
	}
	ch, err := clickhousex.Open(ctx, a.cfg.ClickHouse)
	if err != nil {
		rc.Close()
		return nil, nil, err
	}
	return controlplane.NewStore(ch, rc, a.cfg.Redis.KeyPrefix), func() { ch.Close(); rc.Close() }, nil
}

// seedDemo makes sure the demo workspace, its apps, its owner and its tracking source exist, and
// returns a new admin key and a new private key for the source. Each run creates a new, separately
// revocable API key and rotates the source's private key, because keys are shown only once.
func seedDemo(ctx context.Context, s *controlplane.Store, keys *controlplane.Keyring) (demoCredentials, error) {
	var creds demoCredentials
	apps, err := s.Apps(ctx)
	if err != nil {
		return creds, err
	}
	have := map[string]bool{}
	for _, a := range apps {
		have[a.ID] = true
	}
	var ids []string
	for _, a := range demoApps {
		ids = append(ids, a.ID)
		if !have[a.ID] {
			if err := s.PutApp(ctx, adminActor, a); err != nil {
				return creds, err
			}
		}
	}
	w, err := s.WorkspaceBySlug(ctx, demoSlug)
	if errors.Is(err, controlplane.ErrNotFound) {
		if w, err = s.CreateWorkspace(ctx, adminActor, demoSlug, "Demo Apps Inc.", controlplane.StatusActive); err != nil {
			return creds, err
		}
		if w, err = s.SetSelectedApps(ctx, adminActor, demoSlug, ids); err != nil {
			return creds, err
		}
	} else if err != nil {
		return creds, err
	}
	// The owner signs in to the console with a password generated on each run, printed like the
	// keys (a run that kept the old one would have to store it somewhere to print it again).
	creds.OwnerPassword = demoPassword()
	if _, err := s.CreateUser(ctx, adminActor, demoSlug, demoOwnerEmail, "Demo Owner", controlplane.RoleOwner, creds.OwnerPassword); err != nil {
		return creds, err
	}
	// The demo's platform data comes from the local fake partner API (`revtrack-dev partner-api`).
	fake := partnerfake.DefaultServerConfig()
	if _, err := s.Partners(keys).ConnectPartner(ctx, adminActor, demoSlug, fake.OrgID, fake.Tokens[0]); err != nil {
		return creds, err
	}
	if err := excludeDemoShops(ctx, s, w.ID); err != nil {
		return creds, err
	}
	if creds.APIKey, _, err = s.CreateAPIKey(ctx, adminActor, demoSlug, "make run "+time.Now().UTC().Format(time.RFC3339), controlplane.ScopeAdmin); err != nil {
		return creds, err
	}
	srcs, err := s.Sources(ctx, w.ID)
	if err != nil {
		return creds, err
	}
	for _, src := range srcs {
		if src.Name == demoSourceName {
			src, creds.PrivateKey, err = s.RotatePrivateKey(ctx, adminActor, w.ID, src.ID)
			creds.PublicKey = src.PublicKey
			return creds, err
		}
	}
	src, sk, err := s.CreateSource(ctx, adminActor, demoSlug, demoApps[0].ID, demoSourceName, []string{demoPageOrigin})
	creds.PublicKey, creds.PrivateKey = src.PublicKey, sk
	return creds, err
}

// demoExclusionReason marks the exclusions seed-demo makes.
const demoExclusionReason = "demo data: flagged excluded in the fake partner data"

// excludeDemoShops excludes, in every app, the shops the fake partner API's demo data flags as
// excluded, so the demo shows the feature. A shop's flag does not depend on the data's end date,
// so the data the partner API serves today has the same excluded shops. Shops that already have a
// rule are left alone: an exclusion lifted by hand stays lifted.
func excludeDemoShops(ctx context.Context, s *controlplane.Store, workspaceID string) error {
	have, err := s.CustomerExclusions(ctx, workspaceID, true)
	if err != nil {
		return err
	}
	ruled := map[string]bool{}
	for _, x := range have {
		ruled[x.ShopDomain] = true
	}
	for _, shop := range partnerfake.Generate(partnerfake.DemoConfig(time.Now())).Shops {
		if !shop.Excluded || ruled[shop.Domain] {
			continue
		}
		if _, err := s.ExcludeCustomer(ctx, adminActor, workspaceID, shop.Domain, "", demoExclusionReason); err != nil {
			return err
		}
	}
	return nil
}

// demoPassword is 24 random URL-safe characters: shell-safe in the ready line.
func demoPassword() string {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}
