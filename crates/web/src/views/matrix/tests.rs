use super::*;

#[test]
fn a_selection_is_checked_against_the_trace_as_the_cli_does() {
    let form = |ranks: &str, from: &str| {
        SelectionForm {
            ranks: ranks.into(),
            from: from.into(),
            ..SelectionForm::default()
        }
        .parse()
        .unwrap()
    };
    let run = 982_000_000;
    assert_eq!(
        check_selection(&form("12", ""), 8, run).unwrap_err(),
        "ranks: rank 12 is not in the trace (it has 8 ranks, 0-7)"
    );
    assert!(check_selection(&form("0-99", ""), 8, run)
        .unwrap_err()
        .contains("rank 8 is not"));
    assert_eq!(check_selection(&form("0-7", ""), 8, run), Ok(None));
    let past = check_selection(&form("", "5s"), 8, run).unwrap().unwrap();
    assert_eq!(
        past,
        "The selection keeps no MPI call: from 5 s is after the end of the run, which lasts 0.982 s."
    );
    assert_eq!(check_selection(&form("", "982ms"), 8, run), Ok(None));
    let backwards = SelectionForm {
        from: "2ms".into(),
        to: "1ms".into(),
        ..SelectionForm::default()
    };
    assert!(check_selection(&backwards.parse().unwrap(), 8, run).is_err());
    assert_eq!(
        check_selection(&form("12", ""), 0, run),
        Ok(None),
        "unknown size: not checked"
    );
}

#[test]
fn the_communicators_ticked_are_the_selections_on_comms() {
    let none = SelectionForm::default().parse().unwrap();
    assert_eq!(none.on_comms, None, "nothing ticked: every communicator");
    let ticked = SelectionForm {
        on_comms: vec![20, 9, 20],
        ..SelectionForm::default()
    }
    .parse()
    .unwrap();
    assert_eq!(ticked.on_comms, Some(vec![9, 20]));
}

#[test]
fn arrow_keys_stay_inside_the_matrix() {
    let c = |row, col| Some(Cursor { row, col });
    assert_eq!(moved(None, "ArrowRight", 4), Some(c(0, 1)));
    assert_eq!(moved(c(0, 0), "ArrowUp", 4), Some(c(0, 0)));
    assert_eq!(moved(c(3, 3), "ArrowDown", 4), Some(c(3, 3)));
    assert_eq!(moved(c(2, 2), "End", 4), Some(c(3, 3)));
    assert_eq!(moved(c(2, 2), "Escape", 4), Some(None));
    assert_eq!(moved(c(2, 2), "a", 4), None);
}
