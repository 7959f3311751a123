"""What the tests share: agents they start (``agents``), mock model APIs, waits, and
clients of the servers, kernels and browser pages they drive. Fixtures stay in the
conftest files; everything else they use lives here."""
