package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
)

// resealSecrets is step 2 of key rotation (controlplane.Keyring): every secret sealed at rest, the
// partner tokens and the advertising refresh tokens, is re-sealed with the first key. Both kinds
// are attempted whatever the other does; resealed is their total, so a rotation is finished when a
// run reports 0.
func (a *app) resealSecrets(c *cobra.Command) error {
	keys, err := a.keyring()
	if err != nil {
		return err
	}
	return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
		partners, perr := s.Partners(keys).ResealPartnerTokens(ctx, adminActor)
		ads, aerr := s.AdConnections(keys).ResealAll(ctx, adminActor)
		out := map[string]any{"resealed": partners + ads, "partnerTokens": partners, "adRefreshTokens": ads, "sealingKey": keys.PrimaryKeyID()}
		return errors.Join(perr, aerr, a.printJSON(out))
	})
}

func (a *app) resealCommand() *cobra.Command {
	return &cobra.Command{Use: "reseal", Args: cobra.NoArgs,
		Short: "Re-seal every stored secret (partner tokens, advertising refresh tokens) with the first --encryption-keys key (key rotation step 2)",
		RunE:  func(c *cobra.Command, _ []string) error { return a.resealSecrets(c) }}
}
