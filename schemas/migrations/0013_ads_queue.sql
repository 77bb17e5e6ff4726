-- Upload-queue rows keep what the uploader sent and what the diagnostics poller learnt:
-- poll_attempts counts requestStatus:retrieve calls for the row's request; diagnostics_status is the
-- platform's request status (or UNAVAILABLE when polling stopped without one); the destination
-- (conversion customer, manager login, conversion action) as sent, so a "wrong account" diagnosis
-- can be checked against it; request_events is how many events that request held (1 means its
-- asynchronous diagnostics name this row exactly). For an accepted row next_attempt_at is the next
-- diagnostics poll.
ALTER TABLE upload_queue ADD COLUMN poll_attempts UInt16 DEFAULT 0;
ALTER TABLE upload_queue ADD COLUMN diagnostics_status String DEFAULT '';
ALTER TABLE upload_queue ADD COLUMN conversion_customer_id String DEFAULT '';
ALTER TABLE upload_queue ADD COLUMN login_customer_id String DEFAULT '';
ALTER TABLE upload_queue ADD COLUMN conversion_action_id String DEFAULT '';
ALTER TABLE upload_queue ADD COLUMN request_events UInt32 DEFAULT 0;
