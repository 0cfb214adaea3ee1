from agreement.models_results import ResultModel, ResultRevision, ResultScore  # noqa: F401
