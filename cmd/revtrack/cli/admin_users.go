package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// userCommands manage the people who sign in to the console (docs/SECURITY.md, "Console
// sessions"): the operator's way in before any owner exists, and the one-time links an owner would
// otherwise make in the console. Links are printed, never sent: no e-mail server is needed.
func (a *app) userCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "People who sign in to the console: create, invite, reset passwords, end sessions"}
	var email, name, slug, role string
	var fromStdin bool
	create := &cobra.Command{Use: "create", Short: "Create a user with a password and a role in a workspace (a generated password is printed once)",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			pw, generated := "", false
			if fromStdin {
				line, err := bufio.NewReader(c.InOrStdin()).ReadString('\n')
				if err != nil && line == "" {
					return fmt.Errorf("%w: --password-stdin: no password on standard input", controlplane.ErrInvalid)
				}
				pw = strings.TrimRight(line, "\r\n")
			} else {
				pw, generated = GeneratePassword(), true
			}
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				u, err := s.CreateUser(ctx, adminActor, slug, email, name, role, pw)
				if err != nil {
					return err
				}
				out := map[string]any{"user": u, "workspace": slug, "role": role}
				if generated {
					out["password"] = pw
					out["note"] = "the password is shown only now; change it in the console (My account)"
				}
				return a.printJSON(out)
			})
		}}
	create.Flags().StringVar(&email, "email", "", "e-mail address (the sign-in name)")
	create.Flags().StringVar(&name, "name", "", "display name")
	create.Flags().StringVar(&slug, "workspace", "", "workspace slug")
	create.Flags().StringVar(&role, "role", controlplane.RoleMember, "role in the workspace: owner, admin or member")
	create.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password from the first line of standard input instead of generating one")

	var iEmail, iSlug, iRole string
	invite := &cobra.Command{Use: "invite", Short: "Make a one-time invitation link to a workspace (printed; valid --invitation-ttl)",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				w, err := s.WorkspaceBySlug(ctx, iSlug)
				if err != nil {
					return err
				}
				token, inv, err := s.CreateInvitation(ctx, adminActor, w.ID, iEmail, iRole, a.cfg.Sessions.InvitationTTL)
				if err != nil {
					return err
				}
				return a.printJSON(map[string]any{"invitation": inv, "link": adminapi.InvitationLink(a.cfg.HTTP.BaseURL, token)})
			})
		}}
	invite.Flags().StringVar(&iEmail, "email", "", "e-mail address of the person invited")
	invite.Flags().StringVar(&iSlug, "workspace", "", "workspace slug")
	invite.Flags().StringVar(&iRole, "role", controlplane.RoleMember, "role they get: owner, admin or member")

	var rEmail string
	reset := &cobra.Command{Use: "reset-password", Short: "Make a one-time password-reset link (printed; valid --password-reset-ttl)",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				token, err := s.CreatePasswordReset(ctx, adminActor, "", rEmail, a.cfg.Sessions.PasswordResetTTL)
				if err != nil {
					return err
				}
				return a.printJSON(map[string]any{"link": adminapi.ResetLink(a.cfg.HTTP.BaseURL, token),
					"expiresAt": time.Now().Add(a.cfg.Sessions.PasswordResetTTL).UTC().Truncate(time.Second)})
			})
		}}
	reset.Flags().StringVar(&rEmail, "email", "", "e-mail address of the user")

	sessions := &cobra.Command{Use: "sessions", Short: "A user's console sessions"}
	var sEmail string
	revoke := &cobra.Command{Use: "revoke", Short: "End every console session of a user at once", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), 2*time.Minute)
			defer cancel()
			in, err := a.openInfra(ctx, false, nil)
			if err != nil {
				return err
			}
			defer in.close(context.WithoutCancel(ctx))
			s := controlplane.NewStore(in.clickhouse, in.redis, a.cfg.Redis.KeyPrefix)
			u, err := s.UserByEmail(ctx, sEmail)
			if err != nil {
				return err
			}
			ss, err := authn.NewSessions(in.redis, a.cfg.Redis.KeyPrefix, a.cfg.Sessions, a.cfg.HTTP.BaseURL)
			if err != nil {
				return err
			}
			n, err := ss.EndUser(ctx, u.ID, "")
			if err != nil {
				return err
			}
			if err := s.AuditUser(ctx, u.ID, controlplane.AuditEntry{Actor: adminActor, Action: "user.sessions_revoke", TargetType: "user",
				TargetID: u.ID, Details: map[string]string{"email": u.Email, "ended": fmt.Sprint(n), "why": "revoked by the operator"}}); err != nil {
				return err
			}
			return a.printJSON(map[string]any{"email": u.Email, "sessionsEnded": n})
		}}
	revoke.Flags().StringVar(&sEmail, "email", "", "e-mail address of the user")
	sessions.AddCommand(revoke)

	for _, c := range []*cobra.Command{create, invite, reset, revoke} {
		_ = c.MarkFlagRequired("email")
	}
	_ = create.MarkFlagRequired("workspace")
	_ = invite.MarkFlagRequired("workspace")
	cmd.AddCommand(create, invite, reset, sessions)
	return cmd
}

// GeneratePassword is a random password of 24 URL-safe characters (144 bits), for a user the
// operator creates without choosing one (and the demo owner).
func GeneratePassword() string {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}
