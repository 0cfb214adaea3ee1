from django.apps import AppConfig


class AgreementConfig(AppConfig):
    name = "agreement"
    verbose_name = "Agreement, reports and model comparison"

    def ready(self) -> None:
        # agreement listens to annotation's signals; annotation never imports agreement (docs/architecture.md).
        from agreement import signals

        signals.connect()
        from agreement.core.reports import JOB as REPORT_JOB
        from hume.jobs.registry import JobType, register

        register(REPORT_JOB)
        from agreement.campaigns.review_queue import JOB as CAMPAIGN_REVIEW_JOB

        register(CAMPAIGN_REVIEW_JOB)
        register(JobType(name="ppi estimate", model="agreement.PPIEstimate", task="agreement.compute_ppi",
                         queued_since="requested_at"))
