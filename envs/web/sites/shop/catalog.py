"""The shop's catalogue: products generated from a seed, with the vocabulary they are made of.

A catalogue is :data:`DEFAULT_SIZE` products spread over five categories (clothing, grocery,
beauty, electronics, home and kitchen). Each category has product types (the noun a shopper
asks for: ``men's shirt``, ``protein bar``), and each type has

* **attribute groups** — a product takes one value from some of its type's groups, so a shirt
  is ``long sleeve`` *or* ``short sleeve``, never both (WebShop's ``attributes``);
* **options** — named choices a buyer makes on the product page (``size``, ``color``,
  ``flavor``); a product offers a few values of each. Within one type no value belongs to two
  option names, so a value alone says which option it is;
* a **price range**.

Many products share a type and most of their attributes, which is what makes a search return
look-alikes (WebShop's distractors). Titles are unique within a catalogue, because the oracle
and the tests find a product by its title. Everything is drawn from one
:class:`numpy.random.Generator` seeded with the catalogue seed, so a seed names one catalogue.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["CATEGORIES", "DEFAULT_SIZE", "Product", "ProductType", "generate_catalogue"]

DEFAULT_SIZE = 300
"""Products in a catalogue unless the caller asks for another size."""


@dataclass(frozen=True)
class ProductType:
    """A kind of product: the noun a shopper asks for, and what such products can be."""

    noun: str
    category: str
    attribute_groups: tuple[tuple[str, ...], ...]
    options: Mapping[str, tuple[str, ...]]
    price_range: tuple[float, float]


@dataclass(frozen=True)
class Product:
    """One product of a catalogue; ``id`` is its row id in the shop's database (from 1)."""

    id: int
    title: str
    category: str
    type: str
    attributes: tuple[str, ...]
    options: Mapping[str, tuple[str, ...]]
    price: float
    description: str
    bullets: tuple[str, ...]


_CLOTHING_SIZES = ("x-small", "small", "medium", "large", "x-large", "xx-large")
_CLOTHING_COLORS = (
    "black", "white", "navy", "grey", "red", "olive green", "burgundy", "khaki", "light blue",
    "charcoal",
)  # fmt: skip
_CARE = ("machine washable", "hand wash only")
_FIT = ("slim fit", "relaxed fit", "regular fit")
_SLEEVE = ("long sleeve", "short sleeve")
_FABRIC = ("cotton blend", "polyester", "linen", "wool blend")
_CLOTHING_EXTRA = ("wrinkle free", "moisture wicking", "stretch fabric", "quick dry")

_DIET = ("gluten free", "sugar free", "non gmo", "organic", "keto friendly", "vegan")
_NUTRITION = ("high protein", "low carb", "low sodium", "dairy free", "kosher")

_SKIN = ("paraben free", "sulfate free", "fragrance free", "hypoallergenic")
_ETHICS = ("cruelty free", "natural ingredients", "dermatologist tested")
_BEAUTY_USE = ("long lasting", "travel size", "quick drying")
_SCENTS = ("unscented", "lavender", "coconut", "rose", "citrus", "eucalyptus")
_BOTTLE_SIZES = ("1.7 fl oz", "3.4 fl oz", "8 fl oz", "16 fl oz")

_POWER = ("fast charging", "long battery life", "usb c")
_BUILD = ("water resistant", "shockproof", "lightweight")
_LINK = ("wireless", "bluetooth 5.0", "hands free")
_GADGET_COLORS = ("black", "white", "silver", "rose gold", "blue", "space gray")

_KITCHEN_CARE = ("dishwasher safe", "easy clean", "hand wash recommended")
_SAFETY = ("bpa free", "heat resistant", "oven safe")
_HOME_BUILD = ("stainless steel", "non stick", "eco friendly", "space saving", "leak proof")
_HOME_COLORS = ("white", "black", "sage green", "terracotta", "sand beige", "slate blue")
_TEXTILE = ("machine washable", "quick dry", "ultra soft")

_TYPES: tuple[ProductType, ...] = (
    # clothing
    ProductType("men's shirt", "clothing", (_SLEEVE, _FIT, _CARE, _FABRIC, _CLOTHING_EXTRA),
                {"size": _CLOTHING_SIZES, "color": _CLOTHING_COLORS}, (14.0, 60.0)),
    ProductType("women's blouse", "clothing", (_SLEEVE, _FIT, _CARE, _FABRIC, _CLOTHING_EXTRA),
                {"size": _CLOTHING_SIZES, "color": _CLOTHING_COLORS}, (16.0, 65.0)),
    ProductType("hoodie", "clothing", (_FIT, _CARE, _FABRIC, ("pullover", "zip up")),
                {"size": _CLOTHING_SIZES, "color": _CLOTHING_COLORS}, (20.0, 70.0)),
    ProductType("men's jeans", "clothing",
                (_FIT, _CARE, ("stretch fabric", "quick dry"), ("high waist", "mid rise")),
                {"size": ("28w x 30l", "30w x 30l", "32w x 32l", "34w x 32l", "36w x 34l"),
                 "color": ("dark wash", "light wash", "black", "grey")}, (25.0, 80.0)),
    ProductType("women's dress", "clothing", (_SLEEVE, _FIT, _CARE, _FABRIC),
                {"size": _CLOTHING_SIZES, "color": _CLOTHING_COLORS}, (22.0, 90.0)),
    ProductType("running shorts", "clothing", (_FIT, _CARE, _CLOTHING_EXTRA),
                {"size": _CLOTHING_SIZES, "color": _CLOTHING_COLORS}, (12.0, 40.0)),
    # grocery
    ProductType("protein bar", "grocery", (_DIET, _NUTRITION),
                {"flavor": ("chocolate chip", "peanut butter", "vanilla almond", "salted caramel",
                            "cookies and cream"),
                 "size": ("6 count", "12 count", "24 count")}, (9.0, 35.0)),
    ProductType("herbal tea", "grocery", (_DIET, ("caffeine free", "decaf blend")),
                {"flavor": ("chamomile", "peppermint", "ginger lemon", "hibiscus", "rooibos"),
                 "size": ("20 tea bags", "40 tea bags", "100 tea bags")}, (4.0, 22.0)),
    ProductType("ground coffee", "grocery", (_DIET, ("dark roast", "medium roast", "light roast")),
                {"flavor": ("original", "hazelnut", "french vanilla", "mocha"),
                 "size": ("12 ounce", "24 ounce", "2 pound")}, (8.0, 30.0)),
    ProductType("olive oil", "grocery", (_DIET, ("extra virgin", "cold pressed"), _NUTRITION),
                {"size": ("16.9 fl oz", "25.4 fl oz", "33.8 fl oz", "1 gallon")}, (10.0, 45.0)),
    ProductType("snack crackers", "grocery", (_DIET, _NUTRITION),
                {"flavor": ("sea salt", "rosemary", "cheddar", "everything", "black pepper"),
                 "size": ("pack of 2", "pack of 4", "pack of 6")}, (5.0, 24.0)),
    # beauty
    ProductType("face moisturizer", "beauty", (_SKIN, _ETHICS, ("spf 30", "oil free")),
                {"scent": _SCENTS, "size": _BOTTLE_SIZES}, (9.0, 55.0)),
    ProductType("shampoo", "beauty", (_SKIN, _ETHICS, ("color safe", "volumizing")),
                {"scent": _SCENTS, "size": _BOTTLE_SIZES}, (6.0, 32.0)),
    ProductType("lipstick", "beauty", (_ETHICS, _BEAUTY_USE, ("matte finish", "satin finish")),
                {"color": ("ruby red", "nude", "coral", "berry", "dusty pink", "plum")},
                (6.0, 28.0)),
    ProductType("nail polish", "beauty", (_ETHICS, _BEAUTY_USE, ("glossy", "matte finish")),
                {"color": ("ruby red", "nude", "coral", "lilac", "midnight blue", "mint")},
                (4.0, 18.0)),
    ProductType("makeup case", "beauty", (("waterproof", "lightweight"), ("travel size",),
                                         ("zipper closure", "magnetic closure")),
                {"color": ("black", "blush pink", "leopard print", "white")}, (8.0, 30.0)),
    # electronics
    ProductType("wireless earbuds", "electronics", (_POWER, _BUILD, ("noise cancelling",)),
                {"color": _GADGET_COLORS}, (19.0, 150.0)),
    ProductType("phone case", "electronics", (_BUILD, ("slim profile", "kickstand")),
                {"color": _GADGET_COLORS,
                 "model": ("iphone 14", "iphone 15", "galaxy s23", "pixel 8")}, (7.0, 35.0)),
    ProductType("usb c cable", "electronics", (("fast charging",), ("braided nylon", "pvc jacket"),
                                               ("data sync",)),
                {"color": _GADGET_COLORS, "length": ("3 ft", "6 ft", "10 ft")}, (5.0, 22.0)),
    ProductType("portable charger", "electronics", (_POWER, _BUILD),
                {"color": _GADGET_COLORS, "capacity": ("5000mah", "10000mah", "20000mah")},
                (15.0, 60.0)),
    ProductType("bluetooth speaker", "electronics", (_LINK, _BUILD, ("long battery life",)),
                {"color": _GADGET_COLORS}, (20.0, 130.0)),
    ProductType("smart watch", "electronics", (_LINK, _BUILD, ("heart rate monitor", "gps")),
                {"color": _GADGET_COLORS, "band size": ("38mm", "42mm", "45mm")}, (35.0, 250.0)),
    # home and kitchen
    ProductType("water bottle", "home and kitchen", (_SAFETY, _HOME_BUILD, _KITCHEN_CARE),
                {"color": _HOME_COLORS, "capacity": ("18 oz", "24 oz", "32 oz", "40 oz")},
                (10.0, 45.0)),
    ProductType("frying pan", "home and kitchen", (_SAFETY, _HOME_BUILD, _KITCHEN_CARE),
                {"size": ("8 inch", "10 inch", "12 inch")}, (15.0, 90.0)),
    ProductType("bath towel", "home and kitchen", (_TEXTILE, ("cotton", "bamboo")),
                {"color": _HOME_COLORS, "pack": ("set of 2", "set of 4", "set of 6")},
                (15.0, 60.0)),
    ProductType("storage bins", "home and kitchen", (_HOME_BUILD, ("foldable", "stackable")),
                {"color": _HOME_COLORS, "pack": ("set of 2", "set of 4", "set of 6")},
                (12.0, 50.0)),
    ProductType("table lamp", "home and kitchen", (("dimmable", "touch control"),
                                                  ("usb charging port",), ("eco friendly",)),
                {"color": _HOME_COLORS}, (18.0, 85.0)),
    ProductType("throw pillow", "home and kitchen",
                (_TEXTILE, ("hidden zipper", "removable cover")),
                {"color": _HOME_COLORS, "size": ("16 x 16 inch", "18 x 18 inch", "20 x 20 inch")},
                (9.0, 40.0)),
)  # fmt: skip

PRODUCT_TYPES: dict[str, ProductType] = {t.noun: t for t in _TYPES}
"""Every product type, by noun."""

CATEGORIES: tuple[str, ...] = tuple(dict.fromkeys(t.category for t in _TYPES))
"""The categories, in the order the home page lists them."""

_BRANDS = (
    "Northwind", "Bluepeak", "Oakline", "Sunmere", "Kestrel", "Alder & Co", "Vantor", "Lumio",
    "Brightfield", "Corvia", "Nimbus", "Tidewell", "Harbor Lane", "Quillon", "Redfern",
    "Solstice", "Marlowe", "Pure Grove", "Fennick", "Juniper Row", "Aurelo", "Wexley",
    "Copperleaf", "Halvard",
)  # fmt: skip
_STYLES = (
    "Classic", "Everyday", "Premium", "Essential", "Signature", "Urban", "Heritage", "Modern",
    "Active", "Original", "Select", "Studio",
)  # fmt: skip
_BLURBS = (
    "{a}, for everyday use",
    "{a}, as the label promises",
    "{a}, checked by our quality team",
    "{a}, without compromise on quality",
)


@functools.lru_cache(maxsize=64)
def generate_catalogue(seed: int, size: int = DEFAULT_SIZE) -> tuple[Product, ...]:
    """The catalogue of ``seed``: ``size`` products with unique titles, ids 1..size.

    Cached: the shop's site, its tasks and its tests all ask for the same few catalogues.
    """
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"a catalogue seed is a non-negative int, got {seed!r}")
    if not isinstance(size, int) or not 1 <= size <= 20_000:
        raise ValueError(f"a catalogue has between 1 and 20000 products, got size={size!r}")
    rng = np.random.default_rng(int(seed))
    products: list[Product] = []
    titles: set[str] = set()
    while len(products) < size:
        kind = _TYPES[int(rng.integers(len(_TYPES)))]
        product = _draw_product(rng, kind, len(products) + 1)
        if product.title not in titles:
            titles.add(product.title)
            products.append(product)
    return tuple(products)


def _pick(rng: np.random.Generator, values: tuple[str, ...], count: int) -> tuple[str, ...]:
    """``count`` distinct values, kept in vocabulary order (sizes stay small-to-large)."""
    chosen = rng.choice(len(values), size=min(count, len(values)), replace=False)
    return tuple(values[i] for i in sorted(chosen))


def _draw_product(rng: np.random.Generator, kind: ProductType, product_id: int) -> Product:
    groups = kind.attribute_groups
    n_groups = int(rng.integers(min(3, len(groups)), len(groups) + 1))
    group_order = rng.choice(len(groups), size=n_groups, replace=False)
    attributes = tuple(groups[g][int(rng.integers(len(groups[g])))] for g in sorted(group_order))
    attributes = tuple(dict.fromkeys(attributes))  # a value may sit in two groups of a type
    options = {
        name: _pick(rng, values, int(rng.integers(2, min(5, len(values)) + 1)))
        for name, values in kind.options.items()
    }
    low, high = kind.price_range
    price = round(float(rng.uniform(low, high)), 2)
    if rng.random() < 0.6:
        price = int(price) + 0.99  # shops like prices that end in .99
    brand = _BRANDS[int(rng.integers(len(_BRANDS)))]
    style = _STYLES[int(rng.integers(len(_STYLES)))]
    shown = _pick(rng, attributes, 2)
    title = f"{brand} {style} {' '.join(map(_title_case, shown))} {_title_case(kind.noun)}"
    rest = [a for a in attributes if a not in shown]
    first_option = next(iter(options))
    description = (
        f"The {style.lower()} {kind.noun} from {brand}, {' and '.join(shown)}."
        + (f" It is also {' and '.join(rest)}." if rest else "")
        + f" Choose from {len(options[first_option])} {first_option} options."
    )
    bullets = tuple(
        _BLURBS[int(rng.integers(len(_BLURBS)))].format(a=a[0].upper() + a[1:]) for a in attributes
    )
    return Product(
        id=product_id,
        title=title,
        category=kind.category,
        type=kind.noun,
        attributes=attributes,
        options=options,
        price=price,
        description=description,
        bullets=bullets,
    )


_ACRONYMS = frozenset({"bpa", "usb", "spf", "gps", "gmo"})


def _title_case(phrase: str) -> str:
    """``men's shirt`` -> ``Men's Shirt``, ``bpa free`` -> ``BPA Free`` (``str.title`` would
    write ``Men'S`` and ``Bpa``)."""
    return " ".join(
        word.upper() if word in _ACRONYMS else word[0].upper() + word[1:] for word in phrase.split()
    )
