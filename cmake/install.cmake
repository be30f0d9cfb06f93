# placeholder: the install rules are being written (issue 27)
