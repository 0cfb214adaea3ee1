"""The models of the app `annotation`, where Django reads them: annotators, batches, assignments and answers
(annotation/core/models.py), crowd studies (annotation/crowd/models.py) and LLM annotators
(annotation/llm/models.py). The app's root is its top floor, so this module may import every floor below it;
code below the root imports the defining module."""
from annotation.core.models import (  # noqa: F401
    Annotation,
    AnnotationRevision,
    Annotator,
    AnnotatorLanguage,
    Batch,
    BatchAssignee,
    BatchItem,
    Hold,
)
from annotation.crowd.models import CheckResult, DeviceRelease, ExclusionEvent, Participant, StudyLink  # noqa: F401
from annotation.llm.models import LLMAnnotatorConfig, LLMJudgePanel, LLMRequest, LLMRun  # noqa: F401
