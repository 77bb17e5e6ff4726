CREATE VIEW IF NOT EXISTS revtrack.analyst_customer_attribution ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    customer_id,
    public_id,
    shop_domain,
    excluded,
    first_installed_at,
    status,
    if(status = 'attributed', touch_utm_source, '') AS utm_source,
    if(status = 'attributed', touch_utm_medium, '') AS utm_medium,
    if(status = 'attributed', touch_utm_campaign, '') AS utm_campaign,
    if(status = 'attributed', touch_tracker_ref, '') AS tracker_ref,
    if(status = 'attributed',
       multiIf(touch_gclid != '', 'gclid', touch_gbraid != '', 'gbraid', touch_wbraid != '', 'wbraid', 'none'), '') AS click_id_type,
    if(status = 'attributed',
       if(touch_landing_url = '', '', if(path(touch_landing_url) = '', '/', path(touch_landing_url))), '') AS landing_path,
    acquisition_source_id,
    acquisition_id,
    if(linked = 1, toNullable(link_at), NULL) AS linked_at,
    if(linked = 1 AND touched = 1, toNullable(touch_first_seen), NULL) AS first_seen_at
FROM
(
    SELECT
        *,
        ifNull(toUInt32(first_installed_at), 0) AS installed_epoch,
        multiIf(linked = 1 AND touched = 0, 'no_browser_history',
                linked = 1 AND (installed_epoch = 0 OR toUInt32(touch_first_seen) <= installed_epoch + 3600), 'attributed',
                tracked = 0 OR (installed_epoch != 0 AND installed_epoch < toUInt32(tracking_since)), 'before_tracking',
                'unattributed') AS status
    FROM
    (
        SELECT *
        FROM
        (
            SELECT *
            FROM
            (
                SELECT *
                FROM
                (
                    SELECT
                        workspace_id,
                        app_id,
                        customer_id,
                        public_id,
                        shop_domain,
                        lower(shop_domain) AS link_domain,
                        first_installed_at,
                        toUInt8(has(excluded_apps, app_id) OR has(excluded_apps, '')) AS excluded
                    FROM
                    (
                        SELECT
                            workspace_id,
                            app_id,
                            customer_id,
                            argMax(public_id, version) AS public_id,
                            argMax(shop_domain, version) AS shop_domain,
                            argMax(first_installed_at, version) AS first_installed_at
                        FROM revtrack.platform_customers
                        GROUP BY workspace_id, app_id, customer_id
                    ) AS latest_customers
                    ANY LEFT JOIN
                    (
                        SELECT workspace_id, shop_domain, groupArrayIf(app_id, rule_excluded = 1) AS excluded_apps
                        FROM
                        (
                            SELECT workspace_id, shop_domain, app_id, argMax(excluded, version) AS rule_excluded
                            FROM revtrack.customer_exclusions
                            GROUP BY workspace_id, shop_domain, app_id
                        )
                        GROUP BY workspace_id, shop_domain
                    ) AS exclusions USING (workspace_id, shop_domain)
                ) AS customers
                ANY LEFT JOIN
                (
                    SELECT
                        workspace_id,
                        app_id,
                        link_domain,
                        toUInt8(1) AS linked,
                        tupleElement(link, 1) AS acquisition_source_id,
                        tupleElement(link, 2) AS acquisition_id,
                        tupleElement(link, 4) AS link_at
                    FROM
                    (
                        SELECT workspace_id, app_id, shop_domain AS link_domain, argMinMerge(first_link) AS link
                        FROM revtrack.shop_attribution
                        GROUP BY workspace_id, app_id, shop_domain
                    )
                ) AS links USING (workspace_id, app_id, link_domain)
            ) AS linked_customers
            ANY LEFT JOIN
            (
                SELECT
                    workspace_id,
                    source_id AS acquisition_source_id,
                    acquisition_id,
                    toUInt8(1) AS touched,
                    minMerge(first_seen) AS touch_first_seen,
                    argMinMerge(first_utm_source) AS touch_utm_source,
                    argMinMerge(first_utm_medium) AS touch_utm_medium,
                    argMinMerge(first_utm_campaign) AS touch_utm_campaign,
                    argMinMerge(first_tracker_ref) AS touch_tracker_ref,
                    argMinMerge(first_gclid) AS touch_gclid,
                    argMinMerge(first_gbraid) AS touch_gbraid,
                    argMinMerge(first_wbraid) AS touch_wbraid,
                    argMinMerge(first_landing_url) AS touch_landing_url
                FROM revtrack.acquisitions
                PREWHERE acquisition_id GLOBAL IN (
                    SELECT tupleElement(argMinMerge(first_link), 2) FROM revtrack.shop_attribution GROUP BY workspace_id, app_id, shop_domain)
                GROUP BY workspace_id, source_id, acquisition_id
            ) AS touches USING (workspace_id, acquisition_source_id, acquisition_id)
        ) AS touched_customers
        ANY LEFT JOIN
        (
            SELECT workspace_id, app_id, toUInt8(1) AS tracked, minMerge(first_seen) AS tracking_since
            FROM revtrack.acquisitions
            GROUP BY workspace_id, app_id
        ) AS tracking USING (workspace_id, app_id)
    )
);
