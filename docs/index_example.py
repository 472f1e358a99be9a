"""The runnable example on the front page of the documentation.

``docs/index.rst`` includes this file and shows what it prints;
``tests/test_docs.py`` runs it and checks that the output shown there is the
output it prints.
"""

from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, PrivateLogisticRegression, PrivateStandardScaler

X, y = make_classification(n_samples=5_000, n_features=4, random_state=0)

model = make_pipeline(
    PrivateStandardScaler(epsilon=0.5, bounds=(-5, 5), random_state=0),
    PrivateLogisticRegression(1.0, 1e-6, classes=[0, 1], random_state=0),
)
accountant = BudgetAccountant(epsilon=2.0, delta=1e-5)
with accountant:  # charged for every fit in the block, before it reads data
    model.fit(X, y)

print(f"accuracy: {model.score(X, y):.2f}")  # using the model is free
print(f"spent: {accountant.total()}")
print(f"left:  {accountant.remaining()}")
