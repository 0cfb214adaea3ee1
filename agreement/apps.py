from django.apps import AppConfig


class AgreementConfig(AppConfig):
    name = "agreement"
    verbose_name = "Agreement, reports and model comparison"

    def ready(self) -> None:
        # agreement listens to annotation's signals; annotation never imports agreement (docs/architecture.md).
        from agreement import signals

        signals.connect()
        from agreement.reports import JOB as REPORT_JOB
        from hume.jobs.registry import register

        register(REPORT_JOB)
