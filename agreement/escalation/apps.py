from django.apps import AppConfig


class EscalationConfig(AppConfig):
    """Calibrated escalation from the app (issue 25): the stored plans behind the researchers' /escalation/ page."""

    name = "agreement.escalation"
    label = "escalation"
    verbose_name = "Calibrated escalation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from hume.jobs.registry import JobType, register

        register(JobType(name="escalation plan", model="escalation.EscalationPlan", task="escalation.compute_plan",
                         queued_since="created_at"))
