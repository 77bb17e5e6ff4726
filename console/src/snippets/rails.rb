# revtrack: the server side of the acquisition handoff, for Ruby on Rails (app/lib/revtrack.rb).
# Rails' session is a signed, encrypted first-party cookie.
#
# 1. Before the platform's install: the install button posts window.tracker.getAcquisitionId() to
#    your server, which keeps it in the session (remember_acquisition), then redirects to the platform
#    with your own random OAuth state (never the acquisition ID).
# 2. Only after the platform's OAuth callback is verified (HMAC, state/nonce) and the code is
#    exchanged: build the verified event with the session's acquisition ID and send it.
#
# Environment of your server (never in a browser bundle or a URL):
#   REVTRACK_URL, REVTRACK_TEAM, REVTRACK_TRACKER_PK and REVTRACK_TRACKER_SK (the private key).
#
# For example:
#   class InstallsController < ApplicationController
#     def create
#       Revtrack.remember_acquisition(session, params[:acquisitionId])
#       session[:oauth_state] = SecureRandom.hex(16)
#       redirect_to platform_authorize_url(session[:oauth_state]), allow_other_host: true
#     end
#
#     def callback
#       shop = verify_callback_and_exchange_code!(params, session[:oauth_state]) # raises when invalid
#       event = Revtrack.verified_event(session, name: "install", shop: shop)
#       save_install(shop, event) # a retry resends this same event: same eventId and occurredAt
#       Revtrack.send_verified_event(event)
#       redirect_to "/app"
#     end
#   end
require "json"
require "net/http"
require "securerandom"
require "time"
require "uri"

module Revtrack
  ACQUISITION_KEY = "revtrack_acquisition_id"
  ID = /\A[\x21-\x7e]{1,128}\z/

  # Keeps the browser's acquisition ID in the signed session; anything that is not an ID is ignored.
  def self.remember_acquisition(session, acquisition_id)
    session[ACQUISITION_KEY] = acquisition_id if acquisition_id.is_a?(String) && ID.match?(acquisition_id)
  end

  # The body of POST /api/tracking/server-events. Call it only after the platform authenticated the
  # shop. A new eventId per event: a reinstall is a new install.
  def self.verified_event(session, name:, shop:, event_id: SecureRandom.uuid, occurred_at: Time.now.utc.iso8601,
                          amount_cents: nil, currency: nil)
    {
      "teamSlug" => ENV.fetch("REVTRACK_TEAM"),
      "publicKey" => ENV.fetch("REVTRACK_TRACKER_PK"),
      "eventId" => event_id,
      "acquisitionId" => session[ACQUISITION_KEY],
      "name" => name,
      "customerRef" => shop,
      "occurredAt" => occurred_at,
      "amountCents" => amount_cents, # paid and refunded only, with currency
      "currency" => currency,
    }.compact
  end

  # Posts the event with the private key from the environment; a 503 is retried with the same body
  # (the same eventId counts once).
  def self.send_verified_event(event)
    uri = URI.join(ENV.fetch("REVTRACK_URL"), "/api/tracking/server-events")
    attempt = 0
    loop do
      attempt += 1
      req = Net::HTTP::Post.new(uri, "Authorization" => "Bearer #{ENV.fetch("REVTRACK_TRACKER_SK")}",
                                     "Content-Type" => "application/json")
      req.body = JSON.generate(event)
      res = Net::HTTP.start(uri.host, uri.port, use_ssl: uri.scheme == "https") { |http| http.request(req) }
      return JSON.parse(res.body) if %w[200 202].include?(res.code)
      if res.code == "503" && attempt < 4
        sleep(0.5 * 2**attempt)
        next
      end
      raise "revtrack: #{res.code} #{res.body}"
    end
  end
end
