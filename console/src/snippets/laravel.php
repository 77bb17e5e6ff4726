<?php
// revtrack: the server side of the acquisition handoff, for PHP/Laravel (app/Support/Revtrack.php).
// Laravel's session lives behind an encrypted first-party cookie; $session is $request->session().
//
// 1. Before the platform's install: the install button posts window.tracker.getAcquisitionId() to
//    your server, which keeps it in the session (rememberAcquisition), then redirects to the platform
//    with your own random OAuth state (never the acquisition ID).
// 2. Only after the platform's OAuth callback is verified (HMAC, state/nonce) and the code is
//    exchanged: build the verified event with the session's acquisition ID and send it.
//
// Environment of your server (never in a browser bundle or a URL):
//   REVTRACK_URL, REVTRACK_TEAM, REVTRACK_TRACKER_PK and REVTRACK_TRACKER_SK (the private key).
//
// For example (routes/web.php):
//   Route::post('/install', function (Request $request) {
//       Revtrack::rememberAcquisition($request->session(), $request->input('acquisitionId'));
//       $request->session()->put('oauth_state', $state = bin2hex(random_bytes(16)));
//       return redirect()->away(platformAuthorizeUrl($state));
//   });
//   Route::get('/auth/callback', function (Request $request) {
//       $shop = verifyCallbackAndExchangeCode($request, $request->session()->get('oauth_state')); // throws when invalid
//       $event = Revtrack::verifiedEvent($request->session(), 'install', $shop);
//       saveInstall($shop, $event); // a retry resends this same event: same eventId and occurredAt
//       Revtrack::sendVerifiedEvent($event);
//       return redirect('/app');
//   });

namespace App\Support;

final class Revtrack
{
    public const ACQUISITION_KEY = 'revtrack_acquisition_id';

    // Keeps the browser's acquisition ID in the session; anything that is not an ID is ignored.
    public static function rememberAcquisition($session, $acquisitionId): void
    {
        if (is_string($acquisitionId) && preg_match('/^[\x21-\x7e]{1,128}$/', $acquisitionId) === 1) {
            $session->put(self::ACQUISITION_KEY, $acquisitionId);
        }
    }

    // The body of POST /api/tracking/server-events. Call it only after the platform authenticated the
    // shop. A new eventId per event: a reinstall is a new install.
    public static function verifiedEvent($session, string $name, string $shop, ?string $eventId = null,
        ?string $occurredAt = null, ?int $amountCents = null, ?string $currency = null): array
    {
        return array_filter([
            'teamSlug' => self::env('REVTRACK_TEAM'),
            'publicKey' => self::env('REVTRACK_TRACKER_PK'),
            'eventId' => $eventId ?? self::uuid(),
            'acquisitionId' => $session->get(self::ACQUISITION_KEY),
            'name' => $name,
            'customerRef' => $shop,
            'occurredAt' => $occurredAt ?? gmdate('Y-m-d\TH:i:s\Z'),
            'amountCents' => $amountCents, // paid and refunded only, with currency
            'currency' => $currency,
        ], fn ($v) => $v !== null);
    }

    // Posts the event with the private key from the environment; a 503 is retried with the same body
    // (the same eventId counts once).
    public static function sendVerifiedEvent(array $event): array
    {
        $url = rtrim(self::env('REVTRACK_URL'), '/') . '/api/tracking/server-events';
        for ($attempt = 1; ; $attempt++) {
            $context = stream_context_create(['http' => [
                'method' => 'POST',
                'header' => 'Authorization: Bearer ' . self::env('REVTRACK_TRACKER_SK') . "\r\n"
                    . "Content-Type: application/json\r\n",
                'content' => json_encode($event),
                'ignore_errors' => true,
                'timeout' => 10,
            ]]);
            $body = file_get_contents($url, false, $context);
            $status = isset($http_response_header[0]) ? (int) explode(' ', $http_response_header[0])[1] : 0;
            if ($status === 200 || $status === 202) {
                return json_decode($body, true);
            }
            if ($status === 503 && $attempt < 4) {
                usleep((int) (500000 * 2 ** $attempt));
                continue;
            }
            throw new \RuntimeException("revtrack: $status $body");
        }
    }

    private static function env(string $name): string
    {
        $v = getenv($name);
        if ($v === false || $v === '') {
            throw new \RuntimeException("$name is not set");
        }
        return $v;
    }

    private static function uuid(): string
    {
        $b = random_bytes(16);
        $b[6] = chr((ord($b[6]) & 0x0f) | 0x40);
        $b[8] = chr((ord($b[8]) & 0x3f) | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4));
    }
}
