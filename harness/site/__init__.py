"""The catalogue as a spec site, and a run's report: static HTML rendered from the scenario files.

``model`` turns scenario files into plain page data (what the file says, what the model predicts
per build, the last recorded verdicts); ``runs`` reads recorded verdicts from a run's JUnit XML;
``render`` writes the pages with Jinja2 templates (``templates/``); ``report`` is a run's page of
verdicts, linking each scenario's page and timeline image. Nothing here needs a cluster.
"""
