"""Management API routes under /api/v1/: annotators, batches, assignments, annotations."""
from rest_framework.routers import SimpleRouter

from annotation.manage import api as manage_api

router = SimpleRouter(use_regex_path=False)  # path() routes: lookup_value_converter applies
router.register("annotators", manage_api.AnnotatorViewSet, basename="manage-annotator")
router.register("batches", manage_api.BatchViewSet, basename="manage-batch")
router.register("assignments", manage_api.AssignmentViewSet, basename="manage-assignment")
router.register("annotations", manage_api.AnnotationViewSet, basename="manage-annotation")

urlpatterns = router.urls
