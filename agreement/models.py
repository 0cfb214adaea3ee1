"""The models of the app `agreement`, where Django reads them: the report's (agreement/core/models.py), the
imported MTEB results' (agreement/results/models.py), PPI's (agreement/ppi/models.py) and the campaigns'
(agreement/campaigns/models.py). The app's root is its
top floor, so this module may import every floor below it; code below the root imports the defining module."""
from agreement.campaigns.models import Campaign, CampaignReview  # noqa: F401
from agreement.core.models import Report  # noqa: F401
from agreement.ppi.models import PPIDraw, PPIEstimate  # noqa: F401
from agreement.results.models import ResultModel, ResultRevision, ResultScore  # noqa: F401
