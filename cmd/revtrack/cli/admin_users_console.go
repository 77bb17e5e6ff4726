package cli

import (
	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// console is console sign-in as the query component serves it: sessions and the sign-in throttle
// in the shared Redis, links under the public base URL.
func (a *app) console(in *infra, store *controlplane.Store) (*adminapi.Console, error) {
	sessions, err := authn.NewSessions(in.redis, a.cfg.Redis.KeyPrefix, a.cfg.Sessions, a.cfg.HTTP.BaseURL)
	if err != nil {
		return nil, err
	}
	return &adminapi.Console{Auth: &authn.Console{Sessions: sessions, Users: store},
		Throttle: authn.NewThrottle(in.redis, a.cfg.Redis.KeyPrefix, a.cfg.Sessions), BaseURL: a.cfg.HTTP.BaseURL}, nil
}
