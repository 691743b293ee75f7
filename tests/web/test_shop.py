"""The shop: its catalogue, search, pages, the WebShop reward, its tasks and web/Shop-v1.

Site tests drive the real Starlette app with Starlette's TestClient over real episode databases
(no browser); the env tests at the end run real Chromium through ``agentgym.make``.
"""

import json
import re
import sqlite3
import time

import pytest
from starlette.testclient import TestClient

import agentgym
from agentgym.core import GeneratedTaskSet
from agentgym.envs.web.server import make_app
from agentgym.envs.web.sites.base import EPISODE_HEADER, SiteState
from agentgym.envs.web.sites.shop import ShopEnv, ShopSite
from agentgym.envs.web.sites.shop.catalog import CATEGORIES, DEFAULT_SIZE, generate_catalogue
from agentgym.envs.web.sites.shop.reward import Goal, Purchase, score_purchase, score_purchases
from agentgym.envs.web.sites.shop.search import SearchIndex, tokenize
from agentgym.envs.web.sites.shop.tasks import CATALOGUES, LEVELS, ShopTask

SEED = 7


@pytest.fixture
def shop(tmp_path):
    """A server app over two prepared episodes of the same catalogue, and a client per episode."""
    site = ShopSite()
    SiteState(tmp_path, {"shop": site}).prepare("ep1", {"shop": SEED})
    SiteState(tmp_path, {"shop": site}).prepare("ep2", {"shop": SEED})
    app = make_app(tmp_path, {"shop": site})
    clients = {ep: TestClient(app, headers={EPISODE_HEADER: ep}) for ep in ("ep1", "ep2")}
    yield clients
    for client in clients.values():
        client.close()


@pytest.fixture
def client(shop):
    return shop["ep1"]


def catalogue():
    return generate_catalogue(SEED)


def links(html, prefix):
    return re.findall(rf'href="({re.escape(prefix)}[^"]*)"', html)


def result_ids(html):
    return [int(i) for i in re.findall(r'<li><a href="/shop/item/(\d+)\?', html)]


def buy(client, product, options):
    """Buy now with the given options, then place the order; returns the order page."""
    data = {"product_id": str(product.id), **{f"option-{n}": v for n, v in options.items()}}
    assert client.post("/shop/buy", data=data).url.path == "/shop/checkout"
    return client.post("/shop/checkout", data={"name": "Ada", "address": "1 Loop Road"})


def dump(path):
    db = sqlite3.connect(path)
    try:
        return list(db.iterdump())
    finally:
        db.close()


# ---------------------------------------------------------------------- the catalogue


def test_a_seed_names_one_catalogue_and_another_seed_another():
    assert generate_catalogue.__wrapped__(SEED) == generate_catalogue.__wrapped__(SEED)
    assert generate_catalogue(SEED) != generate_catalogue(SEED + 1)


def test_build_is_deterministic_for_a_seed(tmp_path):
    for name in ("a", "b"):
        db = sqlite3.connect(tmp_path / f"{name}.sqlite")
        ShopSite().build(db, SEED)
        db.commit()
        db.close()
    assert dump(tmp_path / "a.sqlite") == dump(tmp_path / "b.sqlite")


def test_build_is_cheap_enough_for_every_episode(tmp_path):
    times = []
    for i in range(3):
        db = sqlite3.connect(tmp_path / f"{i}.sqlite")
        start = time.perf_counter()
        ShopSite().build(db, 5000 + i)  # fresh seeds: the catalogue cache does not help
        db.commit()
        times.append(time.perf_counter() - start)
        db.close()
    # Every episode builds its database: about 20 ms on an idle machine. The bound catches a
    # build grown by an order of magnitude and holds with both cores loaded (160-190 ms seen
    # there, where the old bound of 100 ms failed).
    assert min(times) < 0.5, times


def test_a_catalogue_spans_the_categories_with_unique_titles_and_unambiguous_options():
    products = catalogue()
    assert len(products) == DEFAULT_SIZE
    assert {p.category for p in products} == set(CATEGORIES)
    assert len({p.title for p in products}) == len(products)
    for p in products:
        values = [v for vs in p.options.values() for v in vs]
        assert len(values) == len(set(values)), p  # a value alone names its option
        assert p.attributes and p.bullets and p.price > 0


def test_bad_catalogue_arguments_are_named():
    with pytest.raises(ValueError, match="-1"):
        generate_catalogue(-1)
    with pytest.raises(ValueError, match="size=0"):
        generate_catalogue(1, 0)


# ---------------------------------------------------------------------- search


def test_search_ranks_the_product_whose_title_is_the_query_first():
    products = catalogue()
    index = SearchIndex(products)
    for product in products:
        assert index.search(product.title)[0] == product.id, product.title


def test_search_ranks_products_with_the_asked_attributes_above_those_of_the_type_alone():
    products = catalogue()
    index = SearchIndex(products)
    for shirt in [p for p in products if p.type == "men's shirt"]:
        asked = shirt.attributes[:2]
        ranked = index.search(f"{' '.join(asked)} men's shirt")
        plain = [
            p.id for p in products if p.type == "men's shirt" and not set(asked) & set(p.attributes)
        ]
        assert all(ranked.index(shirt.id) < ranked.index(other) for other in plain), shirt


def test_tokens_ignore_case_apostrophes_stopwords_and_plurals():
    assert tokenize("I need Men's SHIRTS for the dress") == ["men", "shirt", "dress"]


def test_search_results_come_ten_a_page_with_next_and_previous_links(client):
    query = "machine washable shirt"
    ranked = SearchIndex(catalogue()).search(query)
    assert len(ranked) > 20
    first = client.get("/shop/search", params={"q": query}).text
    assert result_ids(first) == ranked[:10]
    assert "Previous page" not in first
    (next_link,) = [link for link in links(first, "/shop/search?") if "page=2" in link]
    second = client.get(next_link.replace("&amp;", "&")).text
    assert result_ids(second) == ranked[10:20]
    assert "Previous page" in second and "Next page" in second


def test_a_category_link_browses_the_category_in_catalogue_order(client):
    page = client.get("/shop/search", params={"category": "grocery"}).text
    grocery = [p.id for p in catalogue() if p.category == "grocery"]
    assert result_ids(page) == grocery[:10]


@pytest.mark.parametrize(
    ("params", "message"),
    [({"page": "x"}, "'x'"), ({"page": "0"}, "'0'"), ({"category": "toys"}, "'toys'")],
)
def test_a_bad_search_parameter_gets_a_page_that_names_it(client, params, message):
    response = client.get("/shop/search", params={"q": "tea", **params})
    assert response.status_code == 400
    assert message in response.text.replace("&#39;", "'")


# ---------------------------------------------------------------------- pages and state


def test_markup_in_a_search_is_shown_as_text_not_run(client):
    page = client.get("/shop/search", params={"q": "<script>alert(1)</script> tea"}).text
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_the_home_page_has_a_labelled_search_box_and_the_categories(client):
    page = client.get("/shop/").text
    assert '<label for="search-query">Search products</label>' in page
    for category in CATEGORIES:
        assert category.capitalize() in page


def test_a_product_page_offers_each_option_as_a_radio_group_and_both_buy_buttons(client):
    product = next(p for p in catalogue() if len(p.options) == 2)
    page = client.get(f"/shop/item/{product.id}").text
    for name, values in product.options.items():
        assert f"<legend>{name.capitalize()}</legend>" in page
        for value in values:
            assert f'name="option-{name}" value="{value}"' in page
    assert ">Add to cart</button>" in page and ">Buy now</button>" in page
    assert f"${product.price:.2f}" in page


def test_an_unknown_product_is_a_404_page(client):
    response = client.get("/shop/item/99999")
    assert response.status_code == 404
    assert "no product 99999" in response.text


def test_add_to_cart_redirects_to_the_cart_which_lists_the_line(client):
    product = catalogue()[0]
    name, values = next(iter(product.options.items()))
    response = client.post(
        "/shop/cart/add",
        data={"product_id": str(product.id), f"option-{name}": values[0]},
        follow_redirects=False,
    )
    assert response.status_code == 303 and response.headers["location"] == "/shop/cart"
    cart = client.get("/shop/cart").text
    assert f"{name}: {values[0]}" in cart and "Cart (1)" in cart


def test_an_option_value_the_product_does_not_offer_is_refused_by_name(client):
    product = catalogue()[0]
    name = next(iter(product.options))
    response = client.post(
        "/shop/cart/add", data={"product_id": str(product.id), f"option-{name}": "plaid"}
    )
    assert response.status_code == 400
    assert "'plaid' is not a" in response.text.replace("&#39;", "'")
    assert "Cart (0)" in response.text


def test_checkout_writes_an_order_row_and_empties_the_cart(client, tmp_path):
    product = catalogue()[3]
    options = {n: vs[-1] for n, vs in product.options.items()}
    order_page = buy(client, product, options)
    assert order_page.url.path == "/shop/orders/1"
    assert "Order #1 placed" in order_page.text and "Cart (0)" in order_page.text
    db = sqlite3.connect(tmp_path / "ep1" / "shop.sqlite")
    (order,) = db.execute("SELECT name, address, total_cents FROM orders").fetchall()
    (item,) = db.execute("SELECT product_id, options, quantity FROM order_items").fetchall()
    assert order == ("Ada", "1 Loop Road", round(product.price * 100))
    assert item == (product.id, json.dumps(options, sort_keys=True), 1)
    assert db.execute("SELECT count(*) FROM cart").fetchone() == (0,)
    assert "Order #1" in client.get("/shop/orders").text


def test_checkout_without_a_name_shows_the_problem_and_places_no_order(client, tmp_path):
    client.post("/shop/cart/add", data={"product_id": "1"})
    response = client.post("/shop/checkout", data={"name": " ", "address": "1 Loop Road"})
    assert response.status_code == 400 and "write the name to ship to" in response.text
    db = sqlite3.connect(tmp_path / "ep1" / "shop.sqlite")
    assert db.execute("SELECT count(*) FROM orders").fetchone() == (0,)


def test_a_cart_line_can_be_removed_and_the_cart_emptied(client):
    for product_id in ("1", "2"):
        client.post("/shop/cart/add", data={"product_id": product_id})
    line = re.search(r'name="line" value="(\d+)"', client.get("/shop/cart").text).group(1)
    assert "Cart (1)" in client.post("/shop/cart/remove", data={"line": line}).text
    assert "Your cart is empty" in client.post("/shop/cart/clear").text


def test_episodes_do_not_see_each_others_cart(shop):
    shop["ep1"].post("/shop/cart/add", data={"product_id": "1"})
    assert "Cart (1)" in shop["ep1"].get("/shop/cart").text
    assert "Your cart is empty" in shop["ep2"].get("/shop/cart").text


# ---------------------------------------------------------------------- the reward

SHIRT = Goal(
    type="men's shirt",
    category="clothing",
    attributes=("long sleeve", "machine washable"),
    options={"size": "large", "color": "navy"},
    price_cap=40.0,
)


def shirt(**changes):
    fields = {
        "title": "Oakline Classic Long Sleeve Machine Washable Men's Shirt",
        "type": "men's shirt",
        "category": "clothing",
        "attributes": ("long sleeve", "machine washable", "slim fit"),
        "options": {"size": "large", "color": "navy"},
        "price": 29.99,
    }
    return Purchase(**{**fields, **changes})


def test_the_right_product_in_the_right_options_under_the_cap_scores_1():
    reward = score_purchase(SHIRT, shirt())
    assert reward.score == 1.0
    assert reward.components() == {"attributes": 1.0, "options": 1.0, "price": 1.0, "type": 1.0}


def test_a_wrong_option_and_a_price_over_the_cap_cost_their_share():
    # 2 attributes + 1 of 2 options + no price = 3 of 5.
    reward = score_purchase(SHIRT, shirt(options={"size": "small", "color": "navy"}, price=45.0))
    assert reward.score == pytest.approx(3 / 5)
    assert reward.options == 0.5 and reward.price == 0.0
    assert "missing size: large" in reward.details and "price over 40.00" in reward.details


def test_a_price_equal_to_the_cap_is_within_it_as_in_webshop():
    assert score_purchase(SHIRT, shirt(price=40.0)).price == 1.0
    assert score_purchase(SHIRT, shirt(price=40.01)).price == 0.0


def webshop_total_reward(num_attr_matches, num_option_matches, price, goal, r_type):
    """WebShop's total reward, transcribed from ``get_reward`` in princeton-nlp/WebShop,
    ``web_agent_site/engine/goal.py`` (commit 6ba9969d): the matches are counted there by fuzzy
    matching, which the shop's exact vocabulary makes exact, so they are given here."""
    r_price = (price <= goal["price_upper"]) if goal["price_upper"] > 0 else None
    total_reward = (num_attr_matches + num_option_matches + r_price) / (
        len(goal["attributes"]) + len(goal["goal_options"]) + 1
    )
    return total_reward * r_type


@pytest.mark.parametrize(
    ("changes", "attr_matches", "option_matches", "r_type"),
    [
        ({}, 2, 2, 1.0),  # everything right, under the cap
        ({"price": 40.0}, 2, 2, 1.0),  # at the cap: WebShop's price <= price_upper
        ({"price": 40.01}, 2, 2, 1.0),  # just over it
        ({"options": {"size": "small", "color": "navy"}, "price": 45.0}, 2, 1, 1.0),
        ({"attributes": ("slim fit",), "options": {}}, 0, 0, 1.0),
        ({"type": "women's blouse", "attributes": ("long sleeve",), "price": 40.0}, 1, 2, 0.5),
    ],
)
def test_the_reward_is_webshops_formula(changes, attr_matches, option_matches, r_type):
    goal = {"attributes": list(SHIRT.attributes), "goal_options": dict(SHIRT.options)}
    bought = shirt(**changes)
    expected = webshop_total_reward(
        attr_matches,
        option_matches,
        bought.price,
        {**goal, "price_upper": SHIRT.price_cap},
        r_type,
    )
    assert score_purchase(SHIRT, bought).score == pytest.approx(expected)


def test_a_goal_without_a_cap_takes_any_price_as_webshops_million_dollar_cap_does():
    # WebShop gives a goal without a price text price_upper = 1000000.
    uncapped = Goal(SHIRT.type, SHIRT.category, SHIRT.attributes, SHIRT.options, None)
    goal = {"attributes": list(SHIRT.attributes), "goal_options": dict(SHIRT.options)}
    expected = webshop_total_reward(2, 2, 999.0, {**goal, "price_upper": 1000000}, 1.0)
    assert score_purchase(uncapped, shirt(price=999.0)).score == pytest.approx(expected) == 1.0


def test_another_type_of_the_category_scores_half_of_its_matches():
    # A blouse with one attribute, both options, under the cap: 4 of 5, times 0.5.
    blouse = shirt(type="women's blouse", attributes=("long sleeve",), title="Lumio Blouse")
    assert score_purchase(SHIRT, blouse).score == pytest.approx(4 / 5 * 0.5)


def test_another_category_scores_a_tenth_if_its_title_shares_a_word_with_the_type_else_0():
    case = Goal(type="makeup case", category="beauty", attributes=("waterproof",))
    phone = Purchase("Vantor Slim Phone Case", "phone case", "electronics", (), {}, 9.99)
    lamp = Purchase("Lumio Table Lamp", "table lamp", "home and kitchen", (), {}, 9.99)
    assert score_purchase(case, phone).score == pytest.approx(1 / 2 * 0.1)  # price ok only
    assert score_purchase(case, lamp).score == 0.0


def test_the_gender_word_of_a_type_is_no_title_overlap():
    shorts = Purchase("Men's Running Shorts", "running shorts", "grocery", (), {}, 1.0)
    assert score_purchase(SHIRT, shorts).type == 0.0


def test_nothing_bought_scores_0_and_an_order_of_several_lines_scores_its_worst():
    assert score_purchases(SHIRT, []).score == 0.0
    mixed = score_purchases(SHIRT, [shirt(), shirt(options={})])
    assert mixed.score == pytest.approx(3 / 5)
    assert "2 lines" in mixed.details


# ---------------------------------------------------------------------- tasks

TASKS = GeneratedTaskSet(
    "web-shop", ShopTask, tuple(LEVELS), sizes={"train": 200, "dev": 50, "test": 50}
)


@pytest.mark.parametrize("difficulty", list(LEVELS))
def test_every_task_asks_what_its_level_asks_of_a_product_that_fits(difficulty):
    level = LEVELS[difficulty]
    for task_id in list(TASKS.ids("train", difficulty))[:60]:
        task = TASKS.get(task_id)
        goal, target = task.goal_spec, task.target
        assert len(goal.attributes) == level.attributes
        assert len(goal.options) == min(level.options, len(target.options))
        assert (goal.price_cap is None) == (level.price_cap is None)
        assert task.rank < level.pages * 10
        assert score_purchase(goal, _as_purchase(target, goal.options)).score == 1.0
        for attribute in goal.attributes:
            assert attribute in task.instruction
        for value in goal.options.values():
            assert value in task.instruction


def _as_purchase(product, options):
    return Purchase(
        product.title, product.type, product.category, product.attributes, options, product.price
    )


def test_a_task_id_always_names_the_same_task():
    a, b = TASKS.get("test/hard/3"), TASKS.get("test/hard/3")
    assert (a.catalogue, a.target, a.instruction) == (b.catalogue, b.target, b.instruction)


def test_splits_shop_in_disjoint_catalogues():
    seen = {split: {TASKS.get(t).catalogue for t in TASKS.ids(split)} for split in CATALOGUES}
    for split, catalogues in seen.items():
        assert catalogues <= set(CATALOGUES[split])
    assert not seen["train"] & (seen["dev"] | seen["test"])


def test_the_hard_price_cap_is_tight():
    for task_id in list(TASKS.ids("dev", "hard"))[:30]:
        task = TASKS.get(task_id)
        assert task.target.price < task.goal_spec.price_cap <= task.target.price + 4


# ---------------------------------------------------------------------- web/Shop-v1 (Chromium)


@pytest.fixture(scope="module")
def env():
    env = agentgym.make("web/Shop-v1")
    yield env
    env.close()


def run_oracle(env, limit=40):
    info = {}
    for _ in range(limit):
        action = env.unwrapped.oracle_action()
        if action is None:
            break
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return info


def test_shop_env_is_exported_and_documented():
    assert "Scoring" in ShopEnv.__doc__ and "Version history" in ShopEnv.__doc__


@pytest.mark.slow
@pytest.mark.parametrize("split", ["train", "dev", "test"])
@pytest.mark.parametrize("difficulty", list(LEVELS))
def test_the_oracle_buys_a_fitting_product_for_score_1(env, split, difficulty):
    env.reset(seed=0, options={"task_id": f"{split}/{difficulty}/1"})
    info = run_oracle(env)
    assert info["verdict"].score == 1.0 and info["verdict"].passed
    assert env.unwrapped._world.path.startswith("/shop/orders/")


@pytest.mark.slow
def test_a_do_nothing_agent_scores_0(env):
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    for _ in range(3):
        _, reward, terminated, _, info = env.step("noop()")
        assert reward == 0.0 and not terminated
    assert info["verdict"].score == 0.0
    assert info["verdict"].details == "nothing was bought"


@pytest.mark.slow
def test_buying_the_target_without_choosing_options_earns_partial_credit_and_ends(env):
    env.reset(seed=0, options={"task_id": "dev/medium/0"})
    task = env.unwrapped.task
    env.step(f'goto("/shop/item/{task.target.id}")')
    info = place_order_as_it_stands(env)
    n = len(task.goal_spec.attributes) + len(task.goal_spec.options) + 1
    verdict = info["verdict"]
    assert verdict.score == pytest.approx((n - len(task.goal_spec.options)) / n)
    assert verdict.components["options"] == 0.0 and not verdict.passed


def place_order_as_it_stands(env):
    """Buy now on the product page, then fill the checkout form and place the order."""
    snap = env.unwrapped._world.snapshot
    env.step(f'click("{snap.find("button", "Buy now").id}")')
    snap = env.unwrapped._world.snapshot
    env.step(f'fill("{snap.find("textbox", "Full name").id}", "Ada")')
    env.step(f'fill("{snap.find("textbox", "Shipping address").id}", "1 Loop Road")')
    _, _, terminated, _, info = env.step(f'click("{snap.find("button", "Place order").id}")')
    assert terminated
    return info


@pytest.mark.slow
def test_the_oracle_empties_a_cart_holding_another_product_before_buying(env):
    env.reset(seed=0, options={"task_id": "test/medium/2"})
    other = 1 if env.unwrapped.task.target.id != 1 else 2
    env.step(f'goto("/shop/item/{other}")')
    snap = env.unwrapped._world.snapshot
    env.step(f'click("{snap.find("button", "Add to cart").id}")')
    assert run_oracle(env)["verdict"].score == 1.0


@pytest.mark.slow
def test_the_oracle_pages_through_results_to_a_product_past_the_first_page(env):
    task_id = "test/medium/147"
    assert env.unwrapped.tasks.get(task_id).rank >= 10  # not on the first page of its query
    env.reset(seed=0, options={"task_id": task_id})
    paths, info = [], {}
    while not info.get("verdict") or not info["verdict"].passed:
        _, _, terminated, _, info = env.step(env.unwrapped.oracle_action())
        paths.append(env.unwrapped._world.path)
        assert terminated == info["verdict"].passed
    assert any(path.startswith("/shop/search?") and "page=2" in path for path in paths)
