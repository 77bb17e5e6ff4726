package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/uploader"
)

// adsQueueCommands: `admin ads queue list|retry`.
func (a *app) adsQueueCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "queue", Short: "Upload-queue rows: status, click evidence, reason codes; Retry"}

	var status, mapping, from, to, cursor string
	var limit int
	list := a.adsCommand("list SLUG", "List upload-queue rows, newest first (nextCursor pages on with --cursor)", cobra.ExactArgs(1),
		func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			f := uploader.ListFilter{Status: uploader.Status(status), MappingID: mapping, Limit: limit, Cursor: cursor}
			var err error
			if f.From, err = adminapi.ParseQueueTime("--from", from); err != nil {
				return nil, err
			}
			if f.To, err = adminapi.ParseQueueTime("--to", to); err != nil {
				return nil, err
			}
			return uploader.NewRows(e.in.clickhouse, uploader.WithDueHints(e.in.redis, a.cfg.Redis.KeyPrefix)).List(ctx, e.ws.ID, f)
		})
	list.Flags().StringVar(&status, "status", "", "queued, unattributed, validated, accepted, retrying or rejected")
	list.Flags().StringVar(&mapping, "mapping", "", "only this mapping's rows")
	list.Flags().StringVar(&from, "from", "", "rows created at or after this RFC 3339 time or date")
	list.Flags().StringVar(&to, "to", "", "rows created before this RFC 3339 time or date")
	list.Flags().IntVar(&limit, "limit", uploader.DefaultListLimit, fmt.Sprintf("rows per page (1 to %d)", uploader.MaxListLimit))
	list.Flags().StringVar(&cursor, "cursor", "", "nextCursor of the previous page")

	retry := a.adsCommand("retry SLUG ROW_ID", "Queue a rejected row again (it must still hold click evidence)", cobra.ExactArgs(2),
		func(ctx context.Context, e adsEnv, args []string) (any, error) {
			return adminapi.RetryUploadRow(ctx, uploader.NewRows(e.in.clickhouse, uploader.WithDueHints(e.in.redis, a.cfg.Redis.KeyPrefix)), e.store, adminActor, e.ws.ID, args[0])
		})

	cmd.AddCommand(list, retry)
	return cmd
}
