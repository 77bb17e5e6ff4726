package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas/bootstrap"
)

func (a *app) migrateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending ClickHouse migrations and create missing Kafka topics (idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			rdb, err := redisx.Open(ctx, a.cfg.Redis)
			if err != nil {
				return err
			}
			defer rdb.Close()
			res, err := bootstrap.Migrate(ctx, a.cfg.ClickHouse, rdb, a.cfg.Redis.KeyPrefix, a.log)
			if err != nil {
				return err
			}
			cl, err := kafkax.NewProducer(a.cfg.Kafka, "migrate", nil)
			if err != nil {
				return err
			}
			defer cl.Close()
			if err := bootstrap.EnsureTopics(ctx, cl, a.cfg.Kafka); err != nil {
				return err
			}
			if len(res.Applied) == 0 {
				fmt.Fprintf(a.out, "schema up to date at version %d; topics present\n", res.Current)
				return nil
			}
			fmt.Fprintf(a.out, "applied migrations %v; schema at version %d; topics present\n", res.Applied, res.Current)
			return nil
		},
	}
}
