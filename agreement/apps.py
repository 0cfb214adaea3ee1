from django.apps import AppConfig


class AgreementConfig(AppConfig):
    name = "agreement"
    verbose_name = "Agreement, reports and model comparison"
