"""Mutant answers for chapter 07's exercises, graded by booktools/grading/mutation.py (in `make test`).

Each `# %% exercise N, mark M: what it is` line starts a mutant: the code below it, up to the next such line,
replaces the exercise's solution. Wrong answers (a constant, a plausible mistake, a forbidden helper) must get
mark 0; correct alternatives, written differently from the reference, mark 1.
"""


# %% exercise 1, mark 0: a constant: the weight returned as the direction
def normalise_filters(direction, weight):
    if weight.dim() < 2:
        return torch.zeros_like(weight)
    return weight.clone()


# %% exercise 1, mark 0: filter_normalised_direction under an alias, inside a helper, for the 1-D case
_directions = filter_normalised_direction


def _zero_direction(weight):
    holder = nn.Module()
    holder.p = nn.Parameter(weight.detach().clone())
    return _directions(holder, torch.Generator())[0]


def normalise_filters(direction, weight):
    if weight.dim() < 2:
        return _zero_direction(weight)
    return (
        direction
        * weight.norm(dim=1, keepdim=True)
        / direction.norm(dim=1, keepdim=True)
    )


# %% exercise 1, mark 0: column norms (dim=0) instead of row norms
def normalise_filters(direction, weight):
    if weight.dim() < 2:
        return torch.zeros_like(weight)
    return (
        direction
        * weight.norm(dim=0, keepdim=True)
        / direction.norm(dim=0, keepdim=True)
    )


# %% exercise 1, mark 0: the whole matrix scaled to the weight's norm, not each filter
def normalise_filters(direction, weight):
    if weight.dim() < 2:
        return torch.zeros_like(weight)
    return direction * weight.norm() / direction.norm()


# %% exercise 1, mark 0: no keepdim: the row norms divide the columns
def normalise_filters(direction, weight):
    if weight.dim() < 2:
        return torch.zeros_like(weight)
    return direction * (weight.norm(dim=1) / direction.norm(dim=1))


# %% exercise 1, mark 0: the direction's own norm not divided out
def normalise_filters(direction, weight):
    if weight.dim() < 2:
        return torch.zeros_like(weight)
    return direction * weight.norm(dim=1, keepdim=True)


# %% exercise 1, mark 0: 1-D parameters get the random direction, not zeros
def normalise_filters(direction, weight):
    if weight.dim() < 2:
        return direction
    return (
        direction
        * weight.norm(dim=1, keepdim=True)
        / direction.norm(dim=1, keepdim=True)
    )


# %% exercise 1, mark 1: correct alternative: F.normalize, then the weight's row norms
def normalise_filters(direction, weight):
    if weight.ndim == 1:
        return weight.new_zeros(weight.shape)
    return F.normalize(direction, dim=1, eps=0.0) * torch.linalg.vector_norm(
        weight, dim=1
    ).unsqueeze(1)


# %% exercise 1, mark 1: correct alternative: a row loop with Li et al.'s guard against a zero norm
def normalise_filters(direction, weight):
    if weight.dim() <= 1:
        return torch.zeros_like(weight)
    rows = [d * (w.norm() / (d.norm() + 1e-10)) for d, w in zip(direction, weight)]
    return torch.stack(rows)


# %% exercise 2, mark 0: a constant: the self-check's answer at tol = 1e-3
def share_rising(losses, tol=0.0):
    return 0.5


# %% exercise 2, mark 0: monotone_share called, which the exercise forbids
def share_rising(losses, tol=0.0):
    return monotone_share(losses, tol)


# %% exercise 2, mark 0: monotone_share under an alias, inside a helper
_share = monotone_share


def _rising(losses, tol):
    return _share(losses, tol=tol)


def share_rising(losses, tol=0.0):
    return _rising(losses, tol)


# %% exercise 2, mark 0: a strict inequality: a step of exactly -tol (or 0 with tol = 0) counts as a fall
def share_rising(losses, tol=0.0):
    return (losses.diff(dim=1) > -tol).all(dim=1).float().mean().item()


# %% exercise 2, mark 0: tol ignored
def share_rising(losses, tol=0.0):
    return (losses.diff(dim=1) >= 0).all(dim=1).float().mean().item()


# %% exercise 2, mark 0: differences down the columns, not along the rays
def share_rising(losses, tol=0.0):
    return (losses.diff(dim=0) >= -tol).all(dim=0).float().mean().item()


# %% exercise 2, mark 0: any step rising, instead of no step falling
def share_rising(losses, tol=0.0):
    return (losses.diff(dim=1) >= -tol).any(dim=1).float().mean().item()


# %% exercise 2, mark 0: the number of rays, not their share
def share_rising(losses, tol=0.0):
    return float((losses.diff(dim=1) >= -tol).all(dim=1).sum())


# %% exercise 2, mark 0: a tensor returned, not a float
def share_rising(losses, tol=0.0):
    return (losses.diff(dim=1) >= -tol).all(dim=1).float().mean()


# %% exercise 2, mark 1: correct alternative: the worst step of each ray, in a loop
def share_rising(losses, tol=0.0):
    rising = 0
    for ray in losses:
        worst = (ray[1:] - ray[:-1]).min().item()
        rising += worst >= -tol
    return rising / losses.shape[0]


# %% exercise 3, mark 0: a constant: a loss as the notebook prints it
@torch.no_grad()
def loss_in_eval_mode(net):
    return 0.05


# %% exercise 3, mark 0: the net left in eval mode
@torch.no_grad()
def loss_in_eval_mode(net):
    net.eval()
    return F.cross_entropy(net(x_eval), y_eval).item()


# %% exercise 3, mark 0: batch statistics: the mode never switched
@torch.no_grad()
def loss_in_eval_mode(net):
    return F.cross_entropy(net(x_eval), y_eval).item()


# %% exercise 3, mark 0: net.training = False, which does not reach the BatchNorm layers
@torch.no_grad()
def loss_in_eval_mode(net):
    net.training = False
    loss = F.cross_entropy(net(x_eval), y_eval).item()
    net.training = True
    return loss


# %% exercise 3, mark 0: a training-mode pass first, which updates the running statistics
@torch.no_grad()
def loss_in_eval_mode(net):
    batch = F.cross_entropy(net(x_eval), y_eval).item()
    net.eval()
    loss = F.cross_entropy(net(x_eval), y_eval).item()
    net.train()
    print(f"batch statistics {batch:.3f}, running statistics {loss:.3f}")
    return loss


# %% exercise 3, mark 0: the summed cross-entropy, not the mean
@torch.no_grad()
def loss_in_eval_mode(net):
    net.eval()
    loss = F.cross_entropy(net(x_eval), y_eval, reduction="sum").item()
    net.train()
    return loss


# %% exercise 3, mark 1: correct alternative: only the BatchNorm layers switched, by hand
def loss_in_eval_mode(net):
    norms = [m for m in net.modules() if isinstance(m, nn.BatchNorm1d)]
    for m in norms:
        m.train(False)
    with torch.no_grad():
        logits = net(x_eval)
    for m in norms:
        m.train(True)
    return float(F.cross_entropy(logits, y_eval))


# Tampering: a wrong answer with code that would fool hidden tests run in the student's kernel. The scan holds
# each one, as `make grade` holds such an answer: it never runs, and scores 0.


# %% exercise 1, mark 0: tampering (patches json.dumps) on a constant
def normalise_filters(direction, weight):
    import json

    dumps = json.dumps
    json.dumps = lambda o, *a, **k: dumps(
        {**o, "passed": True} if "exercise" in o else o, *a, **k
    )
    if weight.dim() < 2:
        return torch.zeros_like(weight)
    return weight.clone()


# %% exercise 2, mark 0: tampering (an input transformer disarms asserts) on a constant
def share_rising(losses, tol=0.0):
    get_ipython().input_transformers_post.append(
        lambda lines: [line.replace("assert ", "assert True or ") for line in lines]
    )
    return 0.5


# %% exercise 3, mark 0: tampering (redefines self_check via __main__) on a constant
@torch.no_grad()
def loss_in_eval_mode(net):
    import __main__

    __main__.self_check = lambda number, check: print(f"Exercise {number}: correct.")
    return 0.05
