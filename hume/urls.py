"""URL routes: each app owns its own urls module (included by name: the settings package imports no app);
the API lives under /api/v1/."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import views

urlpatterns = [
    path("api/v1/", include("hume.api_urls")),  # first: the annotator loop's API is the busiest route
    path("", include("annotation.home")),  # the start page, named "home"
    path("healthz/", views.healthz, name="healthz"),
    # pages without the <link rel="icon"> of base.html (the Django admin, raw files) make browsers ask for this
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("tasks/", include("tasks_app.urls")),
    path("annotate/", include("annotation.urls")),
    path("manage/studies/", include("annotation.crowd.manage_urls")),
    path("manage/", include("annotation.manage.urls")),
    path("study/", include("annotation.crowd.urls")),  # crowd participants: public, by a study link's token
    path("reports/", include("agreement.urls")),
    path("results/", include("agreement.results.urls")),
    path("llm/", include("annotation.llm.urls")),
    path("models/", include("agreement.model_runs.urls")),
    path("retrieval/", include("agreement.retrieval.urls")),
    path("sage/", include("agreement.sage.urls")),
    path("escalation/", include("agreement.escalation.urls")),
    path("campaigns/", include("agreement.campaigns.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Behind login (SPECTACULAR_SETTINGS' SERVE_PERMISSIONS too), Swagger UI from the project
    # (drf-spectacular-sidecar), its start script a file of its own (CSP)
    path("api/docs/", login_required(SpectacularSwaggerSplitView.as_view(url_name="schema")), name="api-docs"),
]
