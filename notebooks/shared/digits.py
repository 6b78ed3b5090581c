# scikit-learn's 8x8 digits: shipped with the package, no download.
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

DIGITS_TRAIN, DIGITS_TEST = 1400, 397


def load_digits_split(seed):
    """The digits as tensors: a split stratified by class, 1,400 images for
    training and 397 for testing, drawn by `seed`.

    Pixels (0..16) map to [-1, 1] by x/8 - 1, one map for every pixel, fixed in
    advance: nothing is estimated from the data, so nothing of the test set leaks
    into training, and no pixel that is (almost) always blank is blown up by
    dividing by its tiny spread."""
    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        x,
        y,
        train_size=DIGITS_TRAIN,
        test_size=DIGITS_TEST,
        stratify=y,
        random_state=seed,
    )

    def pixels(a):
        return torch.tensor(a / 8 - 1, dtype=torch.float32)

    return pixels(x_train), torch.tensor(y_train), pixels(x_test), torch.tensor(y_test)
