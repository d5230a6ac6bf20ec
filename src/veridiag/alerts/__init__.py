"""Alert intake: Alertmanager, Grafana and PagerDuty webhooks → queued diagnoses → ``veridiag
worker`` (``payloads`` reads a sender's body, ``intake`` groups and words the question,
``worker`` runs the queue, ``signatures`` checks HMAC-signed deliveries)."""
